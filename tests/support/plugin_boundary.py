"""The boundary between a plugin's package and the core: which modules of ``deeploy_core`` it imports, and where.

A plugin package may import :mod:`deeploy_core.plugin_api` and :mod:`deeploy_core.testing` and nothing else of the
core.  ``tests/test_plugin_api.py`` holds the bundled plugins and the examples to that rule, and
``tests/test_new_plugin.py`` the packages ``deeploy-core new-plugin`` renders; both scan with the functions here.
Every import counts: module level, inside functions, under ``if TYPE_CHECKING:``, and ``importlib.import_module``
(or ``__import__``) with a literal name.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository."""
ALLOWED_MODULES = frozenset({"deeploy_core.plugin_api", "deeploy_core.testing"})
"""The only modules of the core a plugin's package may import."""


def plugin_packages(root: Path = ROOT) -> list[Path]:
    """The packages of the bundled plugins and the examples: folders with an ``__init__.py``, tests left out."""
    packages = [init.parent for init in root.glob("plugins/*/deeploy_*/__init__.py")]
    packages += [init.parent for init in root.glob("examples/*/*/__init__.py") if init.parent.name != "tests"]
    return sorted(packages)


def _import_module_call(node: ast.Call) -> str | None:
    """The literal module name of ``importlib.import_module("x")`` / ``import_module("x")`` / ``__import__("x")``."""
    function = node.func
    name = function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else ""
    if name in ("import_module", "__import__") and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def core_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a ``deeploy_core`` module in ``path``, wherever it stands."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and (module := _import_module_call(node)) is not None:
            found.append((node.lineno, module))
    return sorted((line, module) for line, module in found
                  if module == "deeploy_core" or module.startswith("deeploy_core."))


def boundary_violations(packages: list[Path], root: Path = ROOT) -> list[str]:
    """``file:line: module`` for every import of the core past :data:`ALLOWED_MODULES` in ``packages``."""
    violations = []
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            for line, module in core_imports(path):
                if module not in ALLOWED_MODULES:
                    violations.append(f"{path.relative_to(root).as_posix()}:{line}: {module}")
    return violations
