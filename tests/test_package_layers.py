"""The packages of ``deeploy_core`` in layers, each importing only from its own layer and the ones below (issue 34).

The import-circle test (``test_import_graph.py``) keeps modules from depending
on each other both ways; it cannot see a package that reaches *up*: the
front end instantiating deployers, the compile state importing the network.
Such an import makes the lower package impossible to understand, test or
reuse without everything above it.  Here every package (and top-level module)
has a layer, and every import, deferred ones inside functions and those under
``if TYPE_CHECKING:`` included, must point to the same layer or a lower one.

A wrapper is a deployer (the memory-level and tiler wrappers compose
deployers by wrapping them), so those two modules sit in the deployer's layer
although their packages hold the lower-level machinery they drive.

:data:`UPWARD_ALLOWED` lists the imports that still point up, each with the
change that removes it; it may only shrink.  The test also fails when an entry
is no longer needed, so the list never hides a fixed import.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.package_layers import LAYERS, PACKAGE, layer_of, module_name

UPWARD_ALLOWED: dict[tuple[str, str], str] = {}
"""(importing module, imported module) → why it still points up and what removes it.  Only ever shrinks."""


def imported_modules(path: Path) -> set[str]:
    """Every ``deeploy_core`` module ``path`` imports, at any depth of the file (functions, TYPE_CHECKING)."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                is_module = (PACKAGE.parent / Path(*candidate.split("."))).with_suffix(".py").is_file() or \
                    (PACKAGE.parent / Path(*candidate.split(".")) / "__init__.py").is_file()
                found.add(candidate if is_module else base)
    return {name for name in found if name == "deeploy_core" or name.startswith("deeploy_core.")}


def upward_imports() -> dict[tuple[str, str], int]:
    """(importer, imported) → how many layers up, for every import that points up."""
    upward = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = module_name(path)
        for imported in imported_modules(path):
            if imported == "deeploy_core":
                continue
            rise = layer_of(imported) - layer_of(importer)
            if rise > 0:
                upward[(importer, imported)] = rise
    return upward


def test_every_package_has_a_layer() -> None:
    units = {path.stem if path.is_file() else path.name for path in PACKAGE.iterdir()
             if (path.suffix == ".py" and path.stem != "__init__") or (path.is_dir() and any(path.glob("*.py")))}
    layered = {name for _, names in LAYERS for name in names}
    assert units - layered == set(), "packages without a layer"
    assert layered - units == set(), "layers name packages that do not exist"


def test_no_package_imports_from_a_layer_above() -> None:
    upward = upward_imports()
    unexpected = {edge: rise for edge, rise in upward.items() if edge not in UPWARD_ALLOWED}
    assert unexpected == {}, "imports that point to a higher layer (move the code down, or the import up):\n" + \
        "\n".join(f"  {importer} -> {imported} ({rise} layer(s) up)" for (importer, imported), rise in unexpected.items())


def test_the_allow_list_holds_only_imports_that_still_exist() -> None:
    fixed = set(UPWARD_ALLOWED) - set(upward_imports())
    assert fixed == set(), f"no longer upward, remove from UPWARD_ALLOWED: {sorted(fixed)}"
