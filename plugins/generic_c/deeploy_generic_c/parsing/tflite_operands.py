"""What fixed-point mode's TFLite kernels read from a layer: the mode, 8-bit operands, the fused clamp, parameters.

The QLinearAdd/Mul, average pool, MEAN and Softmax kernels that reproduce TFLite's reference int8 arithmetic
belong to the elementwise, pooling and softmax families; each serves ``requantization="tflite"`` nodes only,
takes int8/uint8 tensors only, clamps to the fused activation's range and turns TFLite's refusal of a scale
(:class:`~deeploy_generic_c.parsing.tflite_arithmetic.TfliteParameterError`) into a mismatch, the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NodeMismatch, NodeParser, NodeTemplate
from deeploy_generic_c.kernels.tflite_requantiser import HEADER
from deeploy_generic_c.parsing.tflite_arithmetic import TfliteParameterError

_T = TypeVar("_T")
TEMPLATE = NodeTemplate("${code}", headers=("stdint.h", HEADER))
"""Inline code that calls the helpers of ``dcg_tflite.h``."""


def require_tflite(node: gs.Node) -> None:
    """Serve only nodes fixed-point mode fused (``requantization="tflite"``)."""
    mode = NodeParser.attribute(node, "requantization", None)
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode != "tflite":  # another family of kernels ("op": the farthest miss, so theirs is the reason reported)
        raise NodeMismatch("op", f"requantization={mode!r}; this kernel computes TFLite's arithmetic "
                                 "(requantization='tflite')")


def eight_bit(*buffers: Buffer) -> None:
    """TFLite's kernels reproduced here are its int8/uint8 ones (16-bit tensors take other paths)."""
    for buffer in buffers:
        if buffer.dtype.is_float or np.dtype(buffer.dtype.numpy).itemsize != 1:
            raise NodeMismatch("dtype", f"{buffer.name} is {buffer.dtype}; TFLite's kernels here take int8/uint8")


def tflite_clamp(node: gs.Node, output: Buffer) -> tuple[int, int]:
    """The output type's range narrowed by ``output_min``/``output_max`` (the fused activation)."""
    info = np.iinfo(output.dtype.numpy)
    low = max(int(info.min), int(NodeParser.attribute(node, "output_min", int(info.min))))
    high = min(int(info.max), int(NodeParser.attribute(node, "output_max", int(info.max))))
    if low > high:
        raise NodeMismatch("attribute", f"output_min {low} exceeds output_max {high} within {output.dtype}")
    return low, high


def tflite_parameters(derive: Callable[..., _T], *scales: float) -> _T:
    """A TFLite parameter derivation whose refusal becomes a NodeMismatch naming the reason."""
    try:
        return derive(*scales)
    except TfliteParameterError as error:
        raise NodeMismatch("attribute", f"TFLite would refuse these scales: {error}") from None


def saturate(value: str, low: int, high: int) -> str:
    """The C expression ``value`` clamped to ``[low, high]``."""
    return f"({value} < {low} ? {low} : ({value} > {high} ? {high} : {value}))"
