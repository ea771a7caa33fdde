"""Where a report came from: the tool, the plugins that took part and the model (``report.json``'s ``provenance``).

Reports are compared across machines and months ("why did the arena grow?"),
and their figures mean little without the versions that produced them and
proof of which model they describe.  Everything recorded here is a function of
the installed distributions and of the model file's bytes — never of the
clock, the machine or where files lie — so two compiles of the same model with
the same installation still write byte-identical reports (the seconds a compile
took go to ``timings.json``).
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from os import PathLike
from pathlib import Path
from typing import Any, Iterable, Protocol

from deeploy_core.errors import DeeployError
from deeploy_core.extensions import RegisteredExtension
from deeploy_core.options.resolved import ExtensionOptions

TOOL_DISTRIBUTION = "deeploy-core"
"""The distribution whose version is the tool's."""

DEFAULT_DOMAIN = "ai.onnx"
"""How ``opsets`` names ONNX's default operator domain, which a model stores as the empty string."""

KIND_ORDER = ("platform", "memory_level", "tiler", "allocator", "code_transformation", "operator")
"""The order of ``extensions`` by kind (within a kind: code transformations in the order they run, operators by
name)."""


class ExtensionLookup(Protocol):
    """What provenance needs of the plugin host: who registered an extension (a DeeployError when nobody did)."""

    def registered(self, kind: str, name: str) -> RegisteredExtension: ...


def report_provenance(model: str | PathLike[str], host: ExtensionLookup | None,
                      extensions: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """``provenance``: the tool, each (kind, name) extension with its plugin's distribution, and the model."""
    return {
        "tool": {"name": TOOL_DISTRIBUTION, "version": tool_version()},
        "extensions": [extension_provenance(host, kind, name) for kind, name in extensions],
        "model": model_provenance(model),
    }


def taking_part(platform: str, options: ExtensionOptions, operators: Iterable[str]) -> list[tuple[str, str]]:
    """(kind, name) of every extension a compile used, in :data:`KIND_ORDER`.

    The selected extensions are those the composer resolved options for; a
    deployer made without the composer still names its platform.
    ``operators`` are the operator extensions whose kernels some layer uses.
    """
    selected = [(entry.kind, entry.name) for entry in options]
    if platform and not any(kind == "platform" for kind, _ in selected):
        selected.insert(0, ("platform", platform))
    selected += [("operator", name) for name in sorted(set(operators))]
    rank = {kind: index for index, kind in enumerate(KIND_ORDER)}
    return sorted(selected, key=lambda entry: rank.get(entry[0], len(KIND_ORDER)))


def tool_version() -> str:
    """deeploy-core's version as its installed distribution states it (the package's own when not installed)."""
    installed = distribution_version(TOOL_DISTRIBUTION)
    if installed is not None:
        return installed
    from deeploy_core import __version__

    return __version__


def distribution_version(distribution: str) -> str | None:
    """The version importlib.metadata finds for ``distribution``, or None when it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def extension_provenance(host: ExtensionLookup | None, kind: str, name: str) -> dict[str, Any]:
    """One extension: its kind and name, the plugin that registered it, that plugin's distribution and version.

    The version is the installed distribution's; a plugin object added by
    hand (tests, notebooks) whose distribution is not installed keeps the
    version it was added with, and None stands for what nobody said.
    """
    entry: dict[str, Any] = {"kind": kind, "name": name, "plugin": None, "distribution": None, "version": None}
    if host is None:
        return entry
    try:
        origin = host.registered(kind, name).origin
    except DeeployError:
        return entry
    entry.update(plugin=origin.plugin, distribution=origin.distribution,
                 version=distribution_version(origin.distribution) or origin.version or None)
    return entry


def model_provenance(model: str | PathLike[str]) -> dict[str, Any]:
    """The model file's SHA-256 (of its bytes as stored; external data files are not included), IR version,
    producer and operator-set versions by domain."""
    import onnx

    data = Path(model).read_bytes()
    proto = onnx.load_model_from_string(data)
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "ir_version": int(proto.ir_version),
        "producer_name": proto.producer_name,
        "producer_version": proto.producer_version,
        "opsets": {(entry.domain or DEFAULT_DOMAIN): int(entry.version)
                   for entry in sorted(proto.opset_import, key=lambda entry: entry.domain or DEFAULT_DOMAIN)},
    }
