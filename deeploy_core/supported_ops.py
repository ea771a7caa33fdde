"""The operator table of a platform, including operators added by plugins.

Each row is one (op, mapper, binding): the types it binds, the constraints its
parser states, where it comes from, which installed platforms map the op, how
the tiler may cut it, and what its arithmetic was checked against.  The last
comes from the platform's own data (:attr:`~deeploy_core.platform.Platform.verification`):
an operator plugin's kernel is not the platform's, so its rows state nothing.
"""

from __future__ import annotations

from typing import Any

from deeploy_core.compilation import CompileSettings
from deeploy_core.deployer import Deployer
from deeploy_core.errors import DeeployError
from deeploy_core.frontend.claims import supporting_platforms
from deeploy_core.ir import DataType
from deeploy_core.lowering.qonnx_listing import qonnx_rows
from deeploy_core.op_tiling import tiling_text
from deeploy_core.platform import Platform
from deeploy_core.plugins import PluginHost
from deeploy_core.plugins.operators import operator_table


def platform_data(host: PluginHost, platform_name: str) -> Platform:
    """The platform data behind an installed platform's deployer (a one-line error when it publishes none)."""
    deployer = host.create("platform", platform_name, CompileSettings())
    platform = deployer.compilation.platform if isinstance(deployer, Deployer) else None
    if platform is None:  # a deployer whose platform is not data (compilation.platform) has no table to show
        raise DeeployError(f"platform {platform_name!r} does not publish an operator table")
    return platform


def _type_names(types: tuple[DataType | None, ...]) -> list[str]:
    """Element type names of a signature; ``any`` where the binding accepts every type."""
    return [str(dtype) if dtype is not None else "any" for dtype in types]


def supported_operators(host: PluginHost, platform_name: str) -> list[dict[str, Any]]:
    """One row per (op, mapper, binding), sorted; the keys are documented in ``docs/cli.rst``."""
    platform = platform_data(host, platform_name)
    rows = []
    platforms: dict[str, list[str]] = {}
    for entry in operator_table(host, platform_name, platform):
        if entry.op_key not in platforms:
            platforms[entry.op_key] = list(supporting_platforms(host, entry.op_key))
        own = entry.extension is None
        verification = [check.as_json() for check in platform.verification.get(entry.op_key, ())] if own else []
        tiling = tiling_text(entry.op_key, entry.mapper, platform)
        for binding in entry.mapper.bindings:
            checker = binding.type_checker
            rows.append(
                {
                    "op": entry.op_key,
                    "kernel": entry.mapper.label(),
                    "signature": checker.signature(),
                    "input_types": _type_names(checker.inputs),
                    "output_types": _type_names(checker.outputs),
                    "constraints": entry.mapper.parser.describe(),
                    "source": entry.source_label,
                    "platforms": platforms[entry.op_key],
                    "tiling": tiling,
                    "verification": verification,
                }
            )
    rows += qonnx_rows([extension.name for extension in host.extensions("platform")])  # lowered by the core
    return sorted(rows, key=lambda row: (row["op"], row["kernel"], row["signature"]))


def verification_text(row: dict[str, Any]) -> str:
    """The statuses of a row for a text table (``peer, onnx-node-tests``), each once; ``unstated`` when it has none."""
    return ", ".join(dict.fromkeys(check["status"] for check in row["verification"])) or "unstated"
