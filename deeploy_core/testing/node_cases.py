"""ONNX's backend node test cases as validation cases for a platform.

``onnx.backend.test.case.node.collect_testcases`` ships, for every operator,
small models with inputs and expected outputs computed by ONNX's reference.
Deployed networks take operator parameters (axes, pads, clip bounds, …) as
constants, while these cases feed them as graph inputs; so only the data
inputs stay run-time inputs — the first input, and every later one that is a
tensor of rank ≥ 1 of a floating-point type or of the first input's type
(``And(a, b)``, ``Equal(a, b)``, ``Add`` of two int32 tensors) — and the
others (indices, axes, shapes, bounds) become initializers holding the case's
value.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import numpy_helper

if TYPE_CHECKING:
    from onnx.backend.test.case.test_case import TestCase


@dataclass(frozen=True)
class NodeCase:
    """One data set of one ONNX node test, ready to compile."""

    name: str
    op_type: str
    model: onnx.ModelProto
    inputs: dict[str, np.ndarray]
    outputs: list[np.ndarray]
    rtol: float
    atol: float


@lru_cache(maxsize=1)
def all_node_test_cases() -> tuple[TestCase, ...]:
    """Every node test case of the installed onnx (collected once per process: it takes seconds)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(collect_testcases(None))


def _as_tensor_proto(value: object) -> onnx.TensorProto | None:
    """A copy of ``value`` if it is (or is an object array wrapping) a TensorProto."""
    if isinstance(value, np.ndarray) and value.dtype == object and value.size == 1:
        value = value.reshape(-1)[0]
    if isinstance(value, onnx.TensorProto):
        copy = onnx.TensorProto()
        copy.CopyFrom(value)
        return copy
    return None


def _runtime_input(index: int, array: np.ndarray, first: np.dtype | None) -> bool:
    """Whether input ``index`` stays a run-time input (see the module doc); ``first`` is input 0's type."""
    if index == 0:
        return array.ndim >= 1 or array.dtype.kind == "f"
    return array.ndim >= 1 and (array.dtype.kind == "f" or array.dtype == first)


def _freeze_parameters(model: onnx.ModelProto, inputs: list[np.ndarray]) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    runtime: dict[str, np.ndarray] = {}
    kept = []
    first: np.dtype | None = None
    for index, (value, array) in enumerate(zip(model.graph.input, inputs)):
        proto = _as_tensor_proto(array)
        if proto is not None:
            # float8 / int4 / … data sets come as TensorProto: numpy cannot hold them.
            proto.name = value.name
            frozen.graph.initializer.append(proto)
            continue
        array = np.asarray(array)
        if index == 0:
            first = array.dtype
        if _runtime_input(index, array, first):
            runtime[value.name] = array
            kept.append(value)
        else:
            frozen.graph.initializer.append(numpy_helper.from_array(array, value.name))
    del frozen.graph.input[:]
    frozen.graph.input.extend(kept)
    return frozen, runtime


CARRIED_TYPES = frozenset(np.dtype(name) for name in (
    "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool"))
"""The element types generated C carries (:mod:`deeploy_core.ir.dtypes`); cases with others (float16, strings) are
left out."""


def node_cases(op_types: set[str], types: frozenset[np.dtype] = CARRIED_TYPES) -> list[NodeCase]:
    """Single-node cases of ``op_types`` whose run-time tensors and outputs all have one of ``types``, by name."""
    cases = []
    for case in all_node_test_cases():
        model = case.model
        if model is None or len(model.graph.node) != 1 or model.graph.node[0].op_type not in op_types:
            continue
        if model.graph.node[0].domain not in ("", "ai.onnx"):
            continue
        data_sets = case.data_sets or ()
        for index, (inputs, outputs) in enumerate(data_sets):
            if any(_as_tensor_proto(a) is not None or np.asarray(a).dtype == object for a in outputs):
                continue
            frozen, runtime = _freeze_parameters(model, list(inputs))
            arrays = [np.asarray(a) for a in outputs]
            if any(a.dtype not in types for a in [*runtime.values(), *arrays]) or not runtime:
                continue
            suffix = f"#{index}" if len(data_sets) > 1 else ""
            cases.append(
                NodeCase(case.name + suffix, model.graph.node[0].op_type, frozen, runtime, arrays,
                         float(case.rtol), float(case.atol))
            )
    return sorted(cases, key=lambda c: c.name)


def float32_node_cases(op_types: set[str]) -> list[NodeCase]:
    """Single-node cases of ``op_types`` whose run-time tensors and outputs are all float32, by name."""
    return node_cases(op_types, frozenset({np.dtype(np.float32)}))
