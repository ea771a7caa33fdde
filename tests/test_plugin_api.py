"""The plugin author's API (issue 18, item 1): one documented, versioned module, and plugins that use only it.

Three things are checked:

* :mod:`deeploy_core.plugin_api` itself — every name of ``__all__`` resolves
  and is documented, the lazily imported names and the names type checkers
  see are the same, and importing it stays cheap;
* the boundary — the packages of the bundled plugins and of
  ``examples/*`` import ``deeploy_core.plugin_api`` and ``deeploy_core.testing``
  and nothing else of the core.  Every import counts: module level, inside
  functions, under ``if TYPE_CHECKING:``, and ``importlib.import_module`` with
  a literal name.  A violation is reported as ``file:line: module``;
* the versioned contract — the host refuses a plugin declaring another major
  in ``DEEPLOY_CORE_API`` (status ``failed``, one line naming both versions)
  and accepts the same major, any minor, or no declaration.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

import deeploy_core.plugin_api as plugin_api
from deeploy_core.plugin_api import (
    AllocationBlock,
    AllocationProblem,
    AllocationSolution,
    AllocatorExtension,
    hookimpl,
)
from deeploy_core.allocation import FirstFitAllocator
from deeploy_core.plugins import PluginCandidate, PluginHost, PluginStatus
from deeploy_core.plugin_api_version import DECLARATION, api_incompatibility
from tests.support.plugin_boundary import ALLOWED_MODULES, boundary_violations, core_imports, plugin_packages

ROOT = Path(__file__).resolve().parent.parent
API_SOURCE = Path(plugin_api.__file__)
HEAVY_MODULES = ("numpy", "onnx", "onnxruntime", "ortools")
"""What importing the API (and a registration module built on it) must not pull in: every command pays for it."""


# -- the module --------------------------------------------------------------------------------------------------


def _eager_names(source: str) -> set[str]:
    """The public names the module binds when imported: its top-level imports and assignments."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom):
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return {name for name in names if not name.startswith("_") and name not in ("annotations", "TYPE_CHECKING",
                                                                                  "Any", "importlib")}


def test_all_is_the_eager_names_plus_the_lazy_table() -> None:
    assert len(plugin_api.__all__) == len(set(plugin_api.__all__)), "a name is listed twice in __all__"
    eager = _eager_names(API_SOURCE.read_text(encoding="utf-8"))
    assert not eager & set(plugin_api._HOMES), "a name is both imported with the module and lazily"
    assert set(plugin_api.__all__) == eager | set(plugin_api._HOMES)
    assert {"API_VERSION", "hookimpl", "PlatformExtension", "OperatorExtension", "DeeployError"} <= eager


@pytest.mark.parametrize("name", plugin_api.__all__)
def test_every_name_resolves_to_its_home(name: str) -> None:
    value = getattr(plugin_api, name)
    assert value is not None
    home = plugin_api._HOMES.get(name)
    if home is not None:
        assert value is getattr(importlib.import_module(home), name)


def test_star_import_and_dir_show_exactly_the_api() -> None:
    namespace: dict[str, Any] = {}
    exec("from deeploy_core.plugin_api import *", namespace)  # noqa: S102 - a fixed literal, not model data
    assert set(namespace) - {"__builtins__"} == set(plugin_api.__all__)
    assert set(plugin_api.__all__) <= set(dir(plugin_api))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        plugin_api.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018


def _attribute_docstrings(source: str) -> dict[str, str]:
    """Name -> the string literal right after its assignment, anywhere in the module (also under ``if``)."""
    docs: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement, following in zip(body, body[1:]):
            targets = (statement.targets if isinstance(statement, ast.Assign) else
                       [statement.target] if isinstance(statement, ast.AnnAssign) else [])
            if (isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                for target in targets:
                    if isinstance(target, ast.Name):
                        docs[target.id] = following.value.value
    return docs


def _own_docstring(value: object) -> str:
    """The docstring written for ``value`` itself: not one inherited, nor the signature dataclasses make up."""
    if isinstance(value, type):
        doc = value.__dict__.get("__doc__") or ""
        return "" if doc.startswith(f"{value.__name__}(") else doc
    if inspect.isfunction(value) or inspect.isbuiltin(value) or inspect.ismodule(value):
        return value.__doc__ or ""
    return ""


@pytest.mark.parametrize("name", plugin_api.__all__)
def test_every_name_is_documented(name: str) -> None:
    """A class or function has a docstring of its own; a value or type alias has one after its line in the API."""
    value = getattr(plugin_api, name)
    doc = _own_docstring(value) or _attribute_docstrings(API_SOURCE.read_text(encoding="utf-8")).get(name, "")
    assert doc.strip(), f"{name} has no docstring: document it where it is defined (or, for a value, in plugin_api)"


def _type_checking_names(source: str) -> set[str]:
    """The public names the ``if TYPE_CHECKING:`` block gives type checkers (imports ``as`` themselves, values)."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    names |= {alias.asname for alias in statement.names if alias.asname == alias.name}
                elif isinstance(statement, ast.Assign):
                    names |= {target.id for target in statement.targets if isinstance(target, ast.Name)}
                elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    names.add(statement.target.id)
    return names


def test_type_checkers_see_every_lazy_name() -> None:
    """mypy reads the ``TYPE_CHECKING`` block, Python the table: a name in only one is untyped or missing."""
    seen = _type_checking_names(API_SOURCE.read_text(encoding="utf-8"))
    assert seen == set(plugin_api._HOMES), (f"only typed: {sorted(seen - set(plugin_api._HOMES))}; "
                                            f"only lazy: {sorted(set(plugin_api._HOMES) - seen)}")


def _modules_after_import(statement: str) -> list[str]:
    code = f"import sys\n{statement}\nprint(' '.join(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_importing_the_api_is_cheap() -> None:
    assert _modules_after_import("import deeploy_core.plugin_api") == []
    # a registration module built on it (the example operator plugin) stays cheap too
    assert _modules_after_import("import deeploy_example_mish.plugin") == []
    # ... while a lazy name really is the core's object, imported on first use
    assert "onnx" in _modules_after_import("from deeploy_core.plugin_api import NetworkContext")


def test_api_version_is_major_dot_minor() -> None:
    assert re.fullmatch(r"\d+\.\d+", plugin_api.API_VERSION)


# -- the boundary ------------------------------------------------------------------------------------------------
# (the scan is tests/support/plugin_boundary.py; test_new_plugin holds the rendered plugins to it too)


def test_bundled_plugins_and_examples_import_only_the_api() -> None:
    violations = boundary_violations(plugin_packages())
    assert not violations, ("plugin packages reach past deeploy_core.plugin_api and deeploy_core.testing "
                            "(import the name from deeploy_core.plugin_api, or add it there):\n  "
                            + "\n  ".join(violations))


def test_the_scan_covers_every_plugin_and_sees_their_imports() -> None:
    """A scan that found no packages, or no imports in them, would pass vacuously."""
    packages = plugin_packages()
    assert {package.name for package in packages} >= {"deeploy_generic_c", "deeploy_minimalloc",
                                                       "deeploy_pulp_cluster", "deeploy_tetris",
                                                       "deeploy_example_mish"}
    for package in packages:
        modules = {module for path in package.rglob("*.py") for _, module in core_imports(path)}
        assert "deeploy_core.plugin_api" in modules, package


def test_the_issue_grep_shows_only_the_two_modules() -> None:
    """The done-when check of issue 18, verbatim: ``grep -rE PATTERN plugins/*/deeploy_*``."""
    pattern = re.compile(r"from deeploy_core(\.[a-z_.]+)? import|import deeploy_core")
    module = re.compile(r"(?:from|import) (deeploy_core[a-z_.]*)")
    lines = [(path, line) for folder in ROOT.glob("plugins/*/deeploy_*") for path in sorted(folder.rglob("*"))
             if path.is_file() and "__pycache__" not in path.parts
             for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if pattern.search(line)]
    assert lines, "the pattern matched nothing: the bundled plugins import the API, so the check itself is broken"
    wrong = [f"{path.relative_to(ROOT)}: {line.strip()}" for path, line in lines
             if {found.rstrip(".") for found in module.findall(line)} - ALLOWED_MODULES]
    assert not wrong, "\n".join(wrong)


def test_every_kind_of_import_past_the_api_is_found(tmp_path: Path) -> None:
    """Module level, inside a function, under ``TYPE_CHECKING``, the package itself and literal dynamic imports."""
    package = tmp_path / "examples" / "demo" / "deeploy_demo"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "plugin.py").write_text(textwrap.dedent("""\
        from typing import TYPE_CHECKING
        import importlib
        from deeploy_core.plugin_api import hookimpl
        from deeploy_core.testing import AllocatorConformance
        import deeploy_core.plugin_api as api
        from deeploy_core import AllocatorExtension
        import deeploy_core.ir as ir
        if TYPE_CHECKING:
            from deeploy_core.tiling.geometry import TileConstraint
        def factory():
            from deeploy_core.network import NetworkDeployer
            return importlib.import_module("deeploy_core.allocation")
        """), encoding="utf-8")
    (tmp_path / "examples" / "demo" / "tests").mkdir()
    (tmp_path / "examples" / "demo" / "tests" / "__init__.py").write_text("import deeploy_core.api\n")
    packages = plugin_packages(tmp_path)
    assert packages == [package]  # tests are not part of the package
    assert boundary_violations(packages, tmp_path) == [
        "examples/demo/deeploy_demo/plugin.py:6: deeploy_core",
        "examples/demo/deeploy_demo/plugin.py:7: deeploy_core.ir",
        "examples/demo/deeploy_demo/plugin.py:9: deeploy_core.tiling.geometry",
        "examples/demo/deeploy_demo/plugin.py:11: deeploy_core.network",
        "examples/demo/deeploy_demo/plugin.py:12: deeploy_core.allocation",
    ]


# -- the versioned contract --------------------------------------------------------------------------------------


class _Plugin:
    """A throw-away allocator plugin; ``DEEPLOY_CORE_API`` is set per test on the class."""

    @hookimpl
    def register_allocators(self, register: Any) -> None:
        register(AllocatorExtension(name="versioned", factory=FirstFitAllocator, description="first fit, again"))


def _plugin_declaring(version: object | None) -> object:
    attributes = {} if version is None else {DECLARATION: version}
    return type("VersionedPlugin", (_Plugin,), attributes)()


def _module_declaring(version: str) -> types.ModuleType:
    """A plugin module as an entry point loads it: the declaration is a module-level constant."""
    module = types.ModuleType("versioned_plugin")
    exec(textwrap.dedent(f"""\
        from deeploy_core.allocation import FirstFitAllocator
        from deeploy_core.plugin_api import AllocatorExtension, hookimpl
        DEEPLOY_CORE_API = {version!r}
        @hookimpl
        def register_allocators(register):
            register(AllocatorExtension(name="versioned", factory=FirstFitAllocator, description="first fit"))
        """), module.__dict__)  # noqa: S102 - the test's own literal source
    return module


def _allocates(host: PluginHost) -> bool:
    """The plugin's allocator is in use: the host makes it and it places two blocks alive together."""
    allocator = host.create("allocator", "versioned")
    problem = AllocationProblem((AllocationBlock("a", 0, 2, 64), AllocationBlock("b", 1, 3, 32)), capacity=96)
    solution = allocator.solve(problem)
    return isinstance(solution, AllocationSolution) and solution.offsets == {"a": 0, "b": 64}


@pytest.mark.parametrize("version", ["2.0", "2.7", None])
def test_the_same_major_or_no_declaration_is_loaded(version: str | None) -> None:
    host = PluginHost()
    record = host.add_plugin(_plugin_declaring(version), name="versioned")
    assert record.status is PluginStatus.OK, record.error
    assert _allocates(host)


def test_another_major_is_refused_with_both_versions_named() -> None:
    host = PluginHost()
    record = host.add_plugin(_plugin_declaring("1.0"), name="versioned")
    assert record.status is PluginStatus.FAILED
    assert "1.0" in record.error and plugin_api.API_VERSION in record.error
    assert "\n" not in record.error
    assert [extension.name for extension in host.extensions("allocator")] == ["first-fit"]


@pytest.mark.parametrize(("version", "status"), [("1.0", PluginStatus.FAILED), ("2.3", PluginStatus.OK),
                                                 ("0.9", PluginStatus.FAILED)])
def test_the_entry_point_path_checks_the_module_constant(version: str, status: PluginStatus) -> None:
    module = _module_declaring(version)
    host = PluginHost.discover(candidates=[PluginCandidate("versioned", "versioned-dist", "0.1", "versioned_plugin",
                                                           lambda: module)])
    record = host.record("versioned")
    assert record.status is status, record.error
    if status is PluginStatus.OK:
        assert _allocates(host)
    else:
        assert f"written for plugin API {version}" in record.error
        assert f"provides plugin API {plugin_api.API_VERSION}" in record.error


@pytest.mark.parametrize("declared", ["two", "1", "1.0.3", 1.0, ""])
def test_a_malformed_declaration_fails_the_plugin_naming_the_value(declared: object) -> None:
    record = PluginHost().add_plugin(_plugin_declaring(declared), name="versioned")
    assert record.status is PluginStatus.FAILED
    assert record.error.startswith(f"{DECLARATION} = {declared!r} is not a plugin API version")


def test_compatibility_is_decided_by_the_major_alone() -> None:
    assert api_incompatibility(_plugin_declaring("3.1"), provided="3.0") is None
    assert api_incompatibility(_plugin_declaring("3.0"), provided="3.9") is None
    reason = api_incompatibility(_plugin_declaring("3.0"), provided="4.2")
    assert reason is not None and "3.0" in reason and "4.2" in reason
    assert api_incompatibility(object()) is None
