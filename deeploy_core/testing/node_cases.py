"""ONNX's backend node test cases as validation cases for a platform.

``onnx.backend.test.case.node.collect_testcases`` ships, for every operator,
small models with inputs and expected outputs computed by ONNX's reference.
Deployed networks take operator parameters (axes, pads, clip bounds, …) as
constants, while these cases feed them as graph inputs; so every input that is
not a floating-point tensor of rank ≥ 1 is turned into an initializer holding
the case's value.
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
def _all_cases() -> tuple[TestCase, ...]:
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


def _freeze_parameters(model: onnx.ModelProto, inputs: list[np.ndarray]) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    runtime: dict[str, np.ndarray] = {}
    kept = []
    for value, array in zip(model.graph.input, inputs):
        proto = _as_tensor_proto(array)
        if proto is not None:
            # float8 / int4 / … data sets come as TensorProto: numpy cannot hold them.
            proto.name = value.name
            frozen.graph.initializer.append(proto)
            continue
        array = np.asarray(array)
        if array.dtype.kind == "f" and array.ndim >= 1:
            runtime[value.name] = array
            kept.append(value)
        else:
            frozen.graph.initializer.append(numpy_helper.from_array(array, value.name))
    del frozen.graph.input[:]
    frozen.graph.input.extend(kept)
    return frozen, runtime


def float32_node_cases(op_types: set[str]) -> list[NodeCase]:
    """Single-node cases of ``op_types`` whose runtime tensors are all float32, in name order."""
    cases = []
    for case in _all_cases():
        model = case.model
        if model is None or len(model.graph.node) != 1 or model.graph.node[0].op_type not in op_types:
            continue
        if model.graph.node[0].domain not in ("", "ai.onnx"):
            continue
        data_sets = case.data_sets or ()
        for index, (inputs, outputs) in enumerate(data_sets):
            frozen, runtime = _freeze_parameters(model, list(inputs))
            arrays = [np.asarray(a) for a in outputs]
            if any(a.dtype != np.float32 for a in [*runtime.values(), *arrays]) or not runtime:
                continue
            suffix = f"#{index}" if len(data_sets) > 1 else ""
            cases.append(
                NodeCase(case.name + suffix, model.graph.node[0].op_type, frozen, runtime, arrays,
                         float(case.rtol), float(case.atol))
            )
    return sorted(cases, key=lambda c: c.name)
