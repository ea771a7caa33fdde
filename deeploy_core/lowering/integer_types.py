"""Element types for integer networks whose ONNX declares every tensor as float.

Deeploy's integer dialect (QuantLib exports) stores integer values in FLOAT
tensors.  Computing them in float32 would be wrong (requantisation
intermediates exceed 2^24), so once the user names integer input types
(``--input-type``, or Deeploy's rule applied to sample data), this pass types
the network in the raw integer domain: whole-valued float constants become the
narrowest integer type that holds them, and every activation gets the type the
op that produces it defines (int32 accumulators, int8/uint8 after
requantisation, the input's type for data movement).  Types never depend on
activation values.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.errors import DeeployError
from deeploy_core.ir.dtypes import (
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    DataType,
)
from deeploy_core.passes import Modifies, Pass

_BY_WIDTH = ((UINT8, INT8), (UINT16, INT16), (UINT32, INT32), (UINT64, INT64))


class IntegerTypingError(DeeployError):
    """The graph cannot be typed in the raw integer domain (an op without an integer type rule, too many levels).

    Its own class so that ``validate``, which tries integer input types taken
    from sample data, can tell "this is not an integer network" from other errors.
    """


def is_whole(values: np.ndarray) -> bool:
    """Every value within 0.001 of its truncation (Deeploy's test for integer data)."""
    data = np.asarray(values, dtype=np.float64)
    return bool(np.all(np.isfinite(data)) and np.all(np.abs(data - np.trunc(data)) <= 1e-3))


def narrowest_integer_type(values: np.ndarray) -> DataType:
    """The narrowest type holding [min, max]; widths 8, 16, 32, 64, unsigned tried before signed."""
    data = np.asarray(values, dtype=np.float64)
    low, high = (float(data.min()), float(data.max())) if data.size else (0.0, 0.0)
    for unsigned, signed in _BY_WIDTH:
        for candidate in (unsigned, signed):
            info = np.iinfo(candidate.numpy)
            if info.min <= low and high <= info.max:
                return candidate
    raise DeeployError(f"integer values in [{low}, {high}] do not fit 64 bits")


def deeploy_input_type(array: np.ndarray) -> DataType:
    """Deeploy's rule for the C type of a test input, from its values (see the peer tests' MANIFEST)."""
    array = np.asarray(array)
    if array.size and not np.any(array):
        return narrowest_integer_type(array) if array.dtype.kind in "iu" else FLOAT32
    if is_whole(array):
        return narrowest_integer_type(np.trunc(np.asarray(array, np.float64)))
    return FLOAT32 if np.array_equal(array.astype(np.float32).astype(np.float64), array.astype(np.float64)) else FLOAT64


def _scalar(value: Any) -> float:
    """A scalar attribute (QuantLib stores many as 1-element tensors)."""
    if isinstance(value, gs.Constant):
        value = value.values
    return float(np.asarray(value).reshape(-1)[0])


def _requant_type(node: gs.Node, inputs: list[DataType]) -> DataType:
    levels = _scalar(node.attrs.get("n_levels_out", node.attrs.get("n_levels", 256)))
    signed = bool(_scalar(node.attrs.get("signed", 1)))
    for bits, (unsigned_type, signed_type) in zip((8, 16, 32), _BY_WIDTH):
        if levels <= 2**bits:
            return signed_type if signed else unsigned_type
    raise IntegerTypingError(f"node {node.name!r} (RequantShift): n_levels={levels} exceeds 32 bits")


def _accumulator(node: gs.Node, inputs: list[DataType]) -> DataType:
    return INT32


def _arithmetic(node: gs.Node, inputs: list[DataType]) -> DataType:
    """Exact int32 between integers; float32 as soon as one operand is float (dequantisation)."""
    return FLOAT32 if any(dtype.is_float for dtype in inputs) else INT32


def _same_as_first(node: gs.Node, inputs: list[DataType]) -> DataType:
    return inputs[0]


def _output_requant_type(node: gs.Node, inputs: list[DataType]) -> DataType:
    """RequantizedAdd: the output's requantisation (``rqsOut_*`` attributes) decides, as for a RequantShift."""
    renamed = gs.Node(node.op, name=node.name, attrs={
        key: node.attrs[f"rqsOut_{key}"] for key in ("n_levels", "n_levels_out", "signed") if f"rqsOut_{key}" in node.attrs})
    return _requant_type(renamed, inputs)


def _int8(node: gs.Node, inputs: list[DataType]) -> DataType:
    """Ops whose kernel saturates or wraps to 8 bits whatever ``n_levels`` says (Deeploy's fused requantisations)."""
    return INT8


def _unsigned_levels(node: gs.Node, inputs: list[DataType]) -> DataType:
    return UINT8 if _scalar(node.attrs.get("n_levels", 256)) <= 256 else UINT16


OUTPUT_TYPE_RULES: dict[str, Callable[[gs.Node, list[DataType]], DataType]] = {
    **{op: _accumulator for op in ("Conv", "Gemm", "MatMul", "ReduceSum", "iGELU", "IntegerDiv", "iHardswish",
                                   "MatMulInteger")},
    **{op: _int8 for op in ("iLayerNorm", "iRMSNorm", "iNoNorm", "RequantizediGELU", "RequantizediHardswish",
                            "RQIntegerDiv")},
    **{op: _requant_type for op in ("RQGemm", "RQMatMul", "RequantizedGemm", "RequantizedMatMul", "RequantizedConv")},
    **{op: _arithmetic for op in ("Add", "Sub", "Mul")},
    **{op: _same_as_first for op in ("MaxPool", "Pad", "Slice", "Transpose", "Reshape", "Flatten", "Squeeze",
                                     "Unsqueeze", "Gather", "Concat", "ReduceMean", "IntegerMean", "Identity",
                                     "DebugPrint")},
    "RequantShift": _requant_type,
    "iSoftmax": _unsigned_levels,
    "ITAMax": _unsigned_levels,
    "ITAPartialMax": _unsigned_levels,
    "RequantizedAdd": _output_requant_type,
    "Dequant": lambda node, inputs: FLOAT32,
}
"""Output element type of each op when its first input is an integer tensor."""


class IntegerTypeInference(Pass[gs.Graph]):
    """Give the graph raw-domain integer types from the given input types."""

    def __init__(self, input_types: dict[str, DataType]) -> None:
        self.input_types = dict(input_types)

    def modifies(self) -> Modifies:
        return Modifies.Types | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        changed = 0
        names = {tensor.name for tensor in graph.inputs}
        unknown = sorted(set(self.input_types) - names)
        if unknown:
            raise DeeployError(f"--input-type names {', '.join(unknown)}, which the model does not have as inputs")
        retyped_to_integer = False
        for tensor in graph.inputs:
            if tensor.name not in self.input_types:
                continue
            wanted = self.input_types[tensor.name]
            declared = np.dtype(tensor.dtype) if tensor.dtype is not None else None
            if declared == np.dtype(wanted.numpy):
                continue  # the model's own type: nothing to retype (a QDQ model's int8 input stays an ONNX graph)
            retyped_to_integer = retyped_to_integer or not wanted.is_float
            tensor.dtype = wanted.numpy
            changed += 1
        if not retyped_to_integer:
            return changed or None
        for tensor in graph.tensors().values():
            if isinstance(tensor, gs.Constant) and np.asarray(tensor.values).dtype.kind == "f" and is_whole(tensor.values):
                integer = narrowest_integer_type(tensor.values)
                tensor.values = np.asarray(tensor.values).astype(integer.numpy)
                changed += 1
        for node in graph.nodes:
            first = node.inputs[0] if node.inputs else None
            if first is None or first.dtype is None or np.dtype(first.dtype).kind not in "iu":
                continue
            rule = OUTPUT_TYPE_RULES.get(node.op)
            if rule is None:
                raise IntegerTypingError(f"node {node.name!r} ({node.op}): no integer type rule for this op")
            input_types = [_dtype_of(t) for t in node.inputs if t.name]
            output = rule(node, input_types)
            for tensor in node.outputs:
                if tensor.name:
                    tensor.dtype = output.numpy
                    changed += 1
        return changed or None


def _dtype_of(tensor: gs.Tensor) -> DataType:
    from deeploy_core.ir.dtypes import from_numpy

    dtype = tensor.values.dtype if isinstance(tensor, gs.Constant) else tensor.dtype
    return from_numpy(np.dtype(dtype))
