"""The packages of ``deeploy_core`` in layers: the one statement of them the layering test and the package map use.

Each package (or top-level module) sits in one layer; a module may import from
its own layer and the ones below (``tests/test_package_layers.py``), and the
package maps in ``CONTRIBUTING.md`` and ``docs/architecture.rst`` are rendered
from this list (``tests/support/package_map.py``).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent.parent / "deeploy_core"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("leaves: errors, versions, progress, scratch folders, tolerances, solver imports",
     ("errors", "extension_origin", "plugin_api_version", "progress", "temporary_paths", "tolerance", "solvers")),
    ("the graph IR every stage works on", ("ir",)),
    ("what a stage needs about one layer: passes, op mapping, memory levels, allocators",
     ("passes", "mapping", "allocation", "memory")),
    ("the stages, the compile state they share and the plugin machinery that feeds them",
     ("frontend", "lowering", "midend", "tiling", "codegen", "report", "options", "extensions", "extension_contracts",
      "hookspecs", "plugins", "platform", "compilation")),
    ("one compile run: the deployers that run the stages, the network deployer, validation and the emulators it "
     "measures on",
     ("deployer", "network", "builtin", "op_tiling", "supported_ops", "node_support_reasons", "model_support",
      "validate", "emulation")),
    ("composing deployers from the user's selection; the library's public surfaces",
     ("compose", "api", "plugin_api", "plugin_template")),
    ("programs on top: the command line, sweeps, the test harness plugin authors use", ("cli", "sweep", "testing")),
    ("the entry point of ``python -m deeploy_core``", ("__main__",)),
)
"""Lowest first; a name is a subpackage or a top-level module of ``deeploy_core``."""

MODULE_LAYERS: dict[str, str] = {
    "deeploy_core.tiling.wrapper": "deployer",
    "deeploy_core.memory.wrapper": "deployer",
}
"""Modules that sit in another unit's layer than their package's (see the module docstring)."""


def layer_of(module: str) -> int:
    unit = MODULE_LAYERS.get(module) or (module.split(".")[1] if "." in module else "__init__")
    for index, (_, names) in enumerate(LAYERS):
        if unit in names:
            return index
    raise AssertionError(f"{module}: package {unit!r} has no layer; add it to LAYERS in tests/support/{Path(__file__).name}")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
