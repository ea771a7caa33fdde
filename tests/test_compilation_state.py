"""Compile state is declared and typed: the Compilation's fields, typed results keyed by type, no delegation.

Wrappers used to write network state onto the platform deployer through
``__setattr__`` delegation; these tests keep that from coming back.
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import pytest

import deeploy_core
from deeploy_core.compilation import Compilation, Results
from deeploy_core.deployer import DeployerWrapper
from deeploy_core.memory.hierarchy import MemoryHierarchy
from deeploy_core.tiling.solution import TilingSolution

PACKAGE = Path(deeploy_core.__file__).parent
DELEGATION_HOOKS = ("__getattr__", "__setattr__", "__delattr__", "__getattribute__")


def _mentions_any(annotation: object) -> bool:
    if annotation is typing.Any:
        return True
    return any(_mentions_any(argument) for argument in typing.get_args(annotation))


def test_deployer_wrapper_does_not_delegate_attributes() -> None:
    for klass in DeployerWrapper.__mro__:
        if klass is object:
            continue
        assert not set(DELEGATION_HOOKS) & set(vars(klass)), f"{klass.__name__} overrides attribute access"
    assert not hasattr(DeployerWrapper, "own_attributes")


def test_no_class_in_the_core_overrides_attribute_access() -> None:
    """The issue's "done when": no ``__setattr__`` delegation writes compile state anywhere in deeploy_core."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                offenders += [f"{path.relative_to(PACKAGE)}: {node.name}.{item.name}" for item in node.body
                              if isinstance(item, ast.FunctionDef) and item.name in DELEGATION_HOOKS]
    assert offenders == []


def test_every_compilation_field_is_declared_with_a_concrete_type() -> None:
    hints = typing.get_type_hints(Compilation)
    fields = dataclasses.fields(Compilation)
    assert {field.name for field in fields} == set(hints)
    assert {"graph", "ctxt", "layers", "memory_plan", "results", "settings", "platform", "code", "generated",
            "progress", "allocator", "allocator_name", "host", "warnings", "lowering_results", "model"} <= set(hints)
    for field in fields:
        assert not _mentions_any(hints[field.name]), f"Compilation.{field.name} is typed {hints[field.name]}"


def test_a_compilation_rejects_undeclared_state() -> None:
    compilation = Compilation(platform_name="p", model="models/net.onnx")
    compilation.warnings.append("declared fields are writable")
    assert compilation.network_name == "net" and compilation.settings.quantization == "exact"
    assert compilation.memory_plan is None and compilation.generated is None and len(compilation.results) == 0
    with pytest.raises(AttributeError):
        compilation.tiled_layers = []  # type: ignore[attr-defined]


def test_results_are_keyed_by_type_and_checked() -> None:
    results = Results()
    hierarchy = MemoryHierarchy.__new__(MemoryHierarchy)  # any instance will do: only its type is checked
    solution = TilingSolution({})
    results[TilingSolution] = solution
    results[MemoryHierarchy] = hierarchy
    assert results[TilingSolution] is solution and results.get(MemoryHierarchy) is hierarchy
    assert TilingSolution in results and Compilation not in results and results.get(Compilation) is None
    with pytest.raises(TypeError, match=r"results\[TilingSolution\] must be a TilingSolution, got MemoryHierarchy"):
        results[TilingSolution] = hierarchy  # type: ignore[assignment]
    with pytest.raises(KeyError, match="no Compilation result"):
        results[Compilation]
    del results[MemoryHierarchy]
    assert list(results) == [TilingSolution]


def test_results_iterate_in_the_same_order_whatever_the_order_of_writing() -> None:
    solution = TilingSolution({})
    first, second = Results(), Results()
    first[TilingSolution], first[str] = solution, "x"
    second[str], second[TilingSolution] = "x", solution
    assert list(first) == list(second) == [str, TilingSolution]
