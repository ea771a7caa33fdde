"""No test module is imported by another file (issue 34): what several tests share lives in a helper module.

A test module that imports another one runs the other's module-level code, drags its fixtures into its own
namespace (pytest then sees them twice) and ties the two files together, so neither can move or be deleted alone.
Shared code belongs in a module whose name does not start with ``test_``: ``tests/support/`` for the core's tests,
a helper module beside the tests for a plugin's (``plugins/generic_c/tests/float_conv_cases.py``), or a conftest
for fixtures.  Every Python file under ``tests/``, ``plugins/*/tests/`` and ``examples/*/tests/`` is parsed with
:mod:`ast`; an ``import`` or ``from ... import`` (absolute or relative, at any depth, also inside functions) or an
``importlib.import_module`` with a literal name that reaches a ``test_*`` module of this repository is reported
as ``file:line: module``.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_TREES = ("tests", "plugins/*/tests", "examples/*/tests")


def python_files(root: Path = ROOT) -> list[Path]:
    """Every Python file of the test trees (test modules, helpers, conftests), the repository's own ones only."""
    files: set[Path] = set()
    for pattern in TEST_TREES:
        for tree in root.glob(pattern):
            files |= {path for path in tree.rglob("*.py") if "__pycache__" not in path.parts}
    return sorted(files)


PROJECT_PACKAGES = ("tests", "plugins", "examples")
"""The top-level folders a test file imports the repository's own modules through."""


def _names_a_test_module(module: str) -> bool:
    """A ``test_*`` module of this repository: under one of :data:`PROJECT_PACKAGES`, relative, or a bare name (a
    sibling on ``sys.path``).  Third-party modules named so (``onnx.backend.test.case.test_case``) are not tests
    here."""
    parts = module.lstrip(".").split(".")
    ours = module.startswith(".") or parts[0] in PROJECT_PACKAGES or len(parts) == 1
    return ours and any(part.startswith("test_") for part in parts)


def _imported_modules(node: ast.AST) -> list[str]:
    """The modules an import statement (or a literal ``import_module`` call) may load; relative ones with their dots."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = "." * node.level + (node.module or "")
        # ``from package import name`` may load the submodule ``package.name``
        return [base, *(f"{base}.{alias.name}" if node.module else base + alias.name for alias in node.names)]
    if isinstance(node, ast.Call):
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        if name in ("import_module", "__import__") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                return [first.value]
    return []


def imports_of_test_modules(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: module`` for each import in ``path`` that reaches a ``test_*`` module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        modules = [module for module in _imported_modules(node) if _names_a_test_module(module)]
        if modules:
            found.append((node.lineno, modules[0]))
    return [f"{path.relative_to(root).as_posix()}:{line}: {module}" for line, module in sorted(found)]


def test_no_file_of_the_test_trees_imports_a_test_module() -> None:
    found = [line for path in python_files() for line in imports_of_test_modules(path)]
    assert not found, ("test modules are imported by other files; move what they share into tests/support/ (or a "
                       "non-test helper module beside a plugin's tests, or a conftest for fixtures):\n  "
                       + "\n  ".join(found))


def test_the_scan_sees_the_core_and_plugin_tests_and_their_helpers() -> None:
    """A scan that found no files, or missed a tree, would pass vacuously."""
    names = {path.relative_to(ROOT).as_posix() for path in python_files()}
    assert {"tests/conftest.py", "tests/test_test_layout.py", "tests/support/package_map.py",
            "plugins/generic_c/tests/conftest.py", "plugins/generic_c/tests/float_conv_cases.py",
            "plugins/pulp_cluster/tests/test_float_bias_tiled.py", "examples/operator-plugin/tests/test_mish.py"} <= names
    assert len([name for name in names if Path(name).name.startswith("test_")]) > 150


def test_every_form_of_importing_a_test_module_is_found(tmp_path: Path) -> None:
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "helper.py").write_text(textwrap.dedent("""\
        import os
        import tests.support.shared
        from tests.support import shared
        from deeploy_core.testing import OperatorConformance
        from . import conftest
        import tests.test_one
        from tests.test_two import helper
        from tests import test_three
        from .test_four import helper
        from . import test_five
        from ..sub.test_six import x
        from onnx.backend.test.case.test_case import TestCase
        import test_nine
        def later():
            import importlib
            from tests.tiling.test_seven import y
            return importlib.import_module("tests.test_eight")
        """), encoding="utf-8")
    assert imports_of_test_modules(folder / "helper.py", tmp_path) == [
        "tests/helper.py:6: tests.test_one",
        "tests/helper.py:7: tests.test_two",
        "tests/helper.py:8: tests.test_three",
        "tests/helper.py:9: .test_four",
        "tests/helper.py:10: .test_five",
        "tests/helper.py:11: ..sub.test_six",
        "tests/helper.py:13: test_nine",
        "tests/helper.py:16: tests.tiling.test_seven",
        "tests/helper.py:17: tests.test_eight",
    ]
