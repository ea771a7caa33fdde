"""Which requantisation a QOperator Conv/MatMul/Gemm layer gets, and the mappers that offer each one.

Conv, MatMul and Gemm islands come in three arithmetics, named by the node's ``requantization`` attribute:
none (QOperator files, the platform's fixed-point kernels: ONNX Runtime's float32 rounding done in integers,
:class:`~deeploy_generic_c.kernels.float32_rounding.Float32RoundingRequantiser`), ``float32`` (exact mode:
:class:`~deeploy_generic_c.kernels.qlinear_requantisers.FloatRequantiser`) and ``tflite`` (fixed-point mode:
:mod:`~deeploy_generic_c.kernels.tflite_requantiser`).  :func:`requantised_mappers` gives each its own
binding, in that order, so reports name the arithmetic a layer uses; :class:`RequantisingParser` is the base
of the conv and matmul/gemm families' QLinear parsers that picks the requantiser.  The output clamp
(``output_min``/``output_max``, a fused Relu, Clip or QCDQ clip) is read here for every QLinear family:
quantisation is monotone, so clamping the quantised output equals running the activation before quantising.
The other QLinear kernels (Add/Mul, average pools, Softmax) pick their mode with :func:`exact_mode` and
:func:`without_requantization` from here too.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NodeMapper, NodeMismatch, NodeParser, NodeTemplate
from deeploy_generic_c.kernels.float32_rounding import HEADER as ROUNDING_HEADER
from deeploy_generic_c.kernels.float32_rounding import Float32RoundingRequantiser
from deeploy_generic_c.kernels.float_bias import FloatBiasRequantiser, float_bias
from deeploy_generic_c.kernels.qlinear_requantisers import FloatRequantiser
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.qlinear_operands import any_types

try:  # engineer B's TFLite requantiser (fixed-point mode); without it, "tflite" nodes find no Conv/MatMul/Gemm kernel
    from deeploy_generic_c.kernels import tflite_requantiser as _tflite
except ImportError:  # pragma: no cover - only while the module is absent
    _tflite = None  # type: ignore[assignment]


class Clamped(Protocol):
    """What :func:`clamp_requantiser` needs of a requantiser: its output and saturation bounds."""

    output: Buffer
    low: int
    high: int


_RequantiserT = TypeVar("_RequantiserT", bound=Clamped)


def requantization_mode(node: gs.Node) -> str | None:
    """The node's ``requantization`` attribute (None when absent: a QOperator file's node)."""
    mode = NodeParser.attribute(node, "requantization", None)
    return None if mode is None else str(mode)


FLOAT32 = "float32"
"""The ``requantization`` attribute of exact mode's nodes."""
EXACT_TEMPLATE = NodeTemplate("${code}", headers=("stdint.h",))
"""Inline code of exact mode's float32 Add/Mul and average pools (no helper header)."""


def exact_mode(node: gs.Node) -> None:
    """Serve ``requantization="float32"`` nodes only (exact mode's Add/Mul, average pools, Softmax)."""
    mode = requantization_mode(node)
    if mode != FLOAT32:
        raise NodeMismatch("attribute", f"requantization={mode!r}; this kernel computes exact mode's float32")


def without_requantization(node: gs.Node) -> None:
    """Serve nodes without the attribute (QOperator files) only: the fixed-point QLinearAdd/Mul and pools."""
    mode = requantization_mode(node)
    if mode is not None:
        raise NodeMismatch("attribute", f"requantization={mode!r} has its own kernel; this one serves QOperator "
                                        "nodes without the attribute")


def output_range(node: gs.Node, output: Buffer) -> tuple[int, int]:
    """The output type's range narrowed by ``output_min``/``output_max`` (a fused activation's clamp)."""
    info = np.iinfo(output.dtype.numpy)
    low = max(int(info.min), int(NodeParser.attribute(node, "output_min", int(info.min))))
    high = min(int(info.max), int(NodeParser.attribute(node, "output_max", int(info.max))))
    if low > high:
        raise NodeMismatch("attribute", f"output_min {low} exceeds output_max {high} within the output type "
                                        f"{output.dtype}: the fused activation's bounds are empty")
    return low, high


def clamp_requantiser(requant: _RequantiserT, node: gs.Node) -> _RequantiserT:
    """``requant`` with its saturation bounds narrowed to the node's output clamp."""
    requant.low, requant.high = output_range(node, requant.output)
    return requant


class RequantisingParser(NodeParser):
    """A parser for one requantisation of Conv/MatMul/Gemm, chosen by the node's ``requantization`` attribute.

    ``fixed-point`` (attribute absent: QOperator files and the platform's own
    fixed-point kernels), ``float32`` (exact mode: ONNX Runtime's float32
    requantisation) or ``tflite`` (fixed-point mode: TFLite's integer
    requantisation).  Each gets its own binding, so reports name which
    arithmetic a layer uses.
    """

    def __init__(self, requantization: str = "fixed-point") -> None:
        self.requantization = requantization

    def requantiser(self, node: gs.Node, x_scale: np.ndarray, w_scale: np.ndarray, y_scale: float, output: Buffer,
                     zero: int, bias: Buffer | None = None, channels: int = 1) -> Any:
        """One scale per weight scale (per tensor or per output channel), clamped to the node's output range.

        A float ``bias`` (over ``channels`` outputs) is exact mode's only: it is added in float32
        (:mod:`~deeploy_generic_c.kernels.float_bias`); the integer arithmetics take an int32 bias.
        """
        mode = requantization_mode(node) or "fixed-point"
        if mode != self.requantization:
            raise NodeMismatch("attribute",
                               f"requantization={mode!r}; this kernel requantises in {self.requantization}")
        scales = w_scale if w_scale.size > 1 else w_scale[:1]
        parts = (float(x_scale[0]), scales, y_scale, scales.size, output, zero)
        if bias is not None and float_bias(bias):
            if mode != "float32":
                raise NodeMismatch("dtype", f"the bias is {bias.dtype}; a float bias is added in exact mode's "
                                            f"float32 requantisation only, {mode} takes an int32 bias")
            return clamp_requantiser(FloatBiasRequantiser(float(x_scale[0]), scales, y_scale, bias, channels,
                                                          output, zero), node)
        if mode == "float32":
            return clamp_requantiser(FloatRequantiser.from_parts(*parts), node)
        if mode == "tflite":
            if _tflite is None:
                raise NodeMismatch("attribute", "requantization='tflite' needs "
                                                "deeploy_generic_c.kernels.tflite_requantiser, "
                                                "which this installation lacks")
            return clamp_requantiser(_tflite.for_op(node.op).from_parts(*parts), node)
        if mode != "fixed-point":
            raise NodeMismatch("attribute", f"unknown requantization={mode!r}; expected float32 or tflite")
        return clamp_requantiser(Float32RoundingRequantiser.from_parts(*parts), node)


ROUNDING_INLINE = NodeTemplate("${code}", headers=("stdint.h", "math.h", ROUNDING_HEADER))
"""Inline code that calls ``dcg_requantize_float32``."""


def scratch_template(*headers: str) -> NodeTemplate:
    """Inline code with an int16 scratch buffer ``dc_scratch`` of ``scratch_bytes`` from the arena (none when 0).

    :data:`~deeploy_generic_c.parsing.integer_bindings.WITH_SCRATCH` with the headers of one requantisation."""
    return NodeTemplate(
        "% if scratch_bytes:\n{\n    int16_t *const dc_scratch = (int16_t *)(void *)(${scratch});\n${code}\n}\n"
        "% else:\n${code}\n% endif\n",
        headers=headers, transients=lambda rep: {"scratch": int(rep["scratch_bytes"])})


def requantised_mappers(parser: type[RequantisingParser], arity: int, op: str,
                        scratch: bool = False) -> tuple[NodeMapper, ...]:
    """Fixed-point (no attribute), float32 requantisation (exact mode), then TFLite's (fixed-point mode).

    ``scratch``: the kernel may ask the arena for ``scratch_bytes`` (QLinearConv's fast kernels).
    """
    def template(*headers: str) -> NodeTemplate:
        return scratch_template(*headers) if scratch else NodeTemplate("${code}", headers=headers)

    mappers = (*single_binding(parser(), any_types(arity), f"{op} fixed-point", template(*ROUNDING_INLINE.headers)),
               *single_binding(parser("float32"), any_types(arity), f"{op} int32, float32 requantisation",
                               template("stdint.h", "math.h")))
    if _tflite is None:
        return mappers
    tflite = template("stdint.h", _tflite.HEADER)
    return (*mappers, *single_binding(parser("tflite"), any_types(arity), f"{op} int32, TFLite requantisation", tflite))
