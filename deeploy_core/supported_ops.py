"""The operator table of a platform, including operators added by plugins."""

from __future__ import annotations

from typing import Any

from deeploy_core.errors import DeeployError
from deeploy_core.deployer import Deployer
from deeploy_core.plugins import PluginHost
from deeploy_core.plugins.operators import operator_table


def supported_operators(host: PluginHost, platform_name: str) -> list[dict[str, Any]]:
    """One row per (op, mapper, binding): op, kernel, type signature, constraints, who provides it."""
    deployer = host.create("platform", platform_name)
    platform = deployer.compilation.platform if isinstance(deployer, Deployer) else None
    if platform is None:  # a deployer whose platform is not data (compilation.platform) has no table to show
        raise DeeployError(f"platform {platform_name!r} does not publish an operator table")
    rows = []
    # The platform's mappers and the plugins', each source labelled with whose variants are tried before it.
    sources: list[tuple[str, Any, str]] = [
        (entry.op_key, entry.mapper, entry.source_label) for entry in operator_table(host, platform_name, platform)
    ]
    for op, mapper, source in sources:
        for binding in mapper.bindings:
            rows.append(
                {
                    "op": op,
                    "kernel": mapper.label(),
                    "signature": binding.type_checker.signature(),
                    "constraints": mapper.parser.describe(),
                    "source": source,
                }
            )
    return sorted(rows, key=lambda row: (row["op"], row["kernel"], row["signature"]))
