"""QONNX's ``Quant``, ``Trunc`` and ``BipolarQuant`` rewritten into standard ONNX before the QDQ rewrite.

Brevitas' ``export_qonnx`` writes every quantiser as one of these ops
(domain ``qonnx.custom_op.general``, see :mod:`deeploy_core.frontend.qonnx_ops`).
No kernel implements them; instead:

* on a constant (weights, bias) they are evaluated here, exactly as qonnx's
  executor evaluates them (:mod:`deeploy_core.lowering.qonnx_arithmetic`), and
  the rounded integers become an int8 / uint8 (bit widths up to 8) or int32
  (wider, zero point 0) constant behind a ``DequantizeLinear`` with the same
  scale and zero point, per tensor or per axis: the QDQ rewrite then sees the
  integer weights ONNX Runtime's quantiser would have written.  Weights of 2 to
  7 bits are stored one per byte.  A quantiser that ``DequantizeLinear`` cannot
  express (non-integral zero point, scales varying along two axes) is folded to
  its float value instead;
* on an activation, ``Quant`` with at most 8 bits, an integral zero point and
  rounding ``ROUND`` (half to even) is ``QuantizeLinear → [Clip] →
  DequantizeLinear``: ``QuantizeLinear`` rounds half to even and saturates to
  the storage type, and QONNX's clamp-then-round equals round-then-clamp for
  integer bounds, so a ``Clip`` to the bit width's range is added only when that
  range is narrower than int8/uint8 (4-bit or narrow-range activations).  With
  a zero point other than 0 the float32 sum ``x / scale + zero_point`` QONNX
  rounds is computed first (``Div``, ``Add``; see :meth:`_Rewriter.activation`);
  other roundings are refused with a one-line error;
* ``Trunc`` (Brevitas' ``TruncAvgPool2d``) after an ``AveragePool`` of
  quantised values with rounding ``ROUND`` becomes a depthwise ``Conv`` of
  ones (the integer window sum, which the QDQ rewrite makes a QLinearConv whose
  multiplier is exactly the power-of-two shift; see
  :meth:`_Rewriter.integer_trunc`); otherwise it recomputes the integer sum
  with ``Div``/``Round``, divides by its shift and rounds with its mode
  (``QuantizeLinear`` for ``ROUND``; ``Floor``, ``Ceil`` or their
  combinations with ``Max``/``Min`` for the others), then dequantises with the
  output scale: the same float32 steps qonnx takes, so the result is identical;
* ``BipolarQuant`` (and a signed 1-bit ``Quant``) folds on weights to ``±1``
  int8 constants; on activations it is refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.errors import DeeployError
from deeploy_core.frontend.qonnx_ops import QONNX_DOMAIN
from deeploy_core.lowering import qonnx_arithmetic as arithmetic
from deeploy_core.lowering.graph_edits import (
    Namer,
    along_axis,
    broadcast_along,
    constant_value,
    detach,
    new_constant,
    new_node,
    quantisation_axis,
)
from deeploy_core.passes import Modifies, Pass

_STORAGE = ((np.int8, -128, 127), (np.uint8, 0, 255), (np.int32, -(2**31), 2**31 - 1))


class QonnxLoweringError(DeeployError):
    """A QONNX node the lowering cannot express exactly in standard ops."""


def _label(node: gs.Node) -> str:
    return f"node {node.name!r} ({node.domain}.{node.op})"


def _refuse(node: gs.Node, reason: str, fix: str) -> QonnxLoweringError:
    return QonnxLoweringError(f"{_label(node)}: {reason}: {fix}")


def _attribute(node: gs.Node, name: str, default: Any) -> Any:
    value = node.attrs.get(name, default)
    return value.decode() if isinstance(value, bytes) else value


def _parameter(node: gs.Node, index: int, what: str) -> np.ndarray:
    if len(node.inputs) <= index:
        raise _refuse(node, f"input {index} ({what}) is missing", "export the model with qonnx/Brevitas again")
    value = constant_value(node.inputs[index])
    if value is None:
        raise _refuse(node, f"the {what} is computed at run time", "only constant quantisation parameters lower")
    return value


def _bit_width(node: gs.Node, index: int) -> int:
    value = _parameter(node, index, "bit width")
    if value.size != 1 or float(value.reshape(-1)[0]) != int(value.reshape(-1)[0]) or int(value.reshape(-1)[0]) < 1:
        raise _refuse(node, f"bit width {value.reshape(-1).tolist()} is not one positive integer",
                      "only integer quantisers lower")
    return int(value.reshape(-1)[0])


def _storage(low: float, high: float) -> type | None:
    """The narrowest of int8, uint8, int32 holding [low, high] (None: none does)."""
    for dtype, type_low, type_high in _STORAGE:
        if type_low <= low and high <= type_high:
            return dtype
    return None


def _integral(values: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(values)) and np.all(np.asarray(values) == np.round(values)))


def _activation_layout(node: gs.Node, data: gs.Tensor, scale: np.ndarray, zero: np.ndarray, low: int, high: int,
                       reason: str, fix: str) -> tuple[tuple[int, ...], list[int] | None, int | None, type]:
    """(shape, declared shape, axis or None, int8/uint8 storage) of an activation quantised by ``scale``/``zero``.

    ``QuantizeLinear``/``DequantizeLinear`` express one scale per tensor or per axis, and the integer kernels take
    8 bits: anything else is refused with ``reason`` and ``fix``.
    """
    shape = tuple(data.shape or ())
    declared = None if data.shape is None else list(shape)
    representable, axis = quantisation_axis([np.shape(scale), np.shape(zero)], shape)
    storage = _storage(min(low, float(zero.min())), max(high, float(zero.max())))
    if storage is None or not representable or storage not in (np.int8, np.uint8):
        raise _refuse(node, reason, fix)
    return shape, declared, axis, storage


def _along_layout(scale: np.ndarray, zero: np.ndarray, shape: tuple[int, ...], axis: int | None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Scale (float32) and zero point as ``DequantizeLinear`` takes them: scalars, or vectors along ``axis``."""
    scale_values = along_axis(np.asarray(scale, np.float32), len(shape), axis)
    zero_values = along_axis(zero, len(shape), axis)
    if axis is not None:
        scale_values = broadcast_along(scale_values, shape[axis])
        zero_values = broadcast_along(zero_values, shape[axis])
    return scale_values, zero_values


class _Rewriter:
    """Rewrites the QONNX nodes of one graph (one instance per pass run)."""

    def __init__(self, graph: gs.Graph) -> None:
        self.graph = graph
        self.namer = Namer(graph)

    # -- folding on constants -------------------------------------------------------------------------------------

    def fold_constant(self, node: gs.Node, integers: np.ndarray, scale: np.ndarray, zero: np.ndarray,
                      value: np.ndarray, bounds: tuple[int, int]) -> None:
        """Replace ``node`` by ``DequantizeLinear(integers)`` or, if that cannot express it, by ``value``.

        The storage type follows the quantiser's range ``bounds`` (and zero
        point), not the values: a 32-bit bias stays int32 even when its values
        are small, as the QDQ rewrite expects of biases.
        """
        output = node.outputs[0]
        shape = tuple(integers.shape)
        representable, axis = quantisation_axis([np.shape(scale), np.shape(zero)], shape)
        low = float(min(bounds[0], integers.min(initial=0), zero.min(initial=0)))
        high = float(max(bounds[1], integers.max(initial=0), zero.max(initial=0)))
        storage = _storage(low, high) if _integral(zero) else None
        if storage is np.int32 and np.any(zero != 0):
            storage = None  # ONNX's DequantizeLinear takes no zero point with int32
        if not representable or storage is None:
            detach(node)
            output.to_constant(value.astype(np.float32))
            return
        scale_values = along_axis(np.asarray(scale, np.float32), len(shape), axis)
        zero_values = along_axis(zero, len(shape), axis)
        if axis is not None:
            scale_values = broadcast_along(scale_values, shape[axis])
            zero_values = broadcast_along(zero_values, shape[axis])
        stem = node.name or output.name
        stored = new_constant(self.namer, f"{stem}_integers", integers.astype(storage))
        inputs = [stored, new_constant(self.namer, f"{stem}_scale", scale_values.astype(np.float32)),
                  new_constant(self.namer, f"{stem}_zero_point", zero_values.astype(storage))]
        detach(node)
        new_node(self.graph, self.namer, "DequantizeLinear", f"{stem}_dequantize", inputs, [output],
                 {"axis": axis} if axis is not None else {})

    # -- Quant ----------------------------------------------------------------------------------------------------

    def quant(self, node: gs.Node) -> None:
        if len(node.inputs) != 4 or len(node.outputs) != 1:
            raise _refuse(node, f"{len(node.inputs)} inputs and {len(node.outputs)} outputs where Quant has 4 and 1",
                          "export the model with qonnx/Brevitas again")
        scale, zero = _parameter(node, 1, "scale"), _parameter(node, 2, "zero point")
        bits = _bit_width(node, 3)
        signed, narrow = bool(_attribute(node, "signed", 1)), bool(_attribute(node, "narrow", 1))
        mode = str(_attribute(node, "rounding_mode", "ROUND"))
        try:
            arithmetic.rounding(mode)
        except ValueError as error:
            raise _refuse(node, str(error), "use one of QONNX's rounding modes") from None
        data = constant_value(node.inputs[0])
        if data is not None:
            value = arithmetic.quant(data, scale, zero, bits, signed, narrow, mode)
            if bits == 1 and signed:  # qonnx executes it as bipolar: the sign of the scaled value
                scaled = np.asarray(data, np.float32) / np.asarray(scale, np.float32) + np.asarray(zero, np.float32)
                integers = np.where(scaled >= 0, 1.0, -1.0)
            else:
                integers = arithmetic.quant_integers(data, scale, zero, bits, signed, narrow, mode)
            integers = np.clip(integers.astype(np.float64), -(2.0**31), 2.0**31 - 1).astype(np.int64)
            bounds = (-1, 1) if bits == 1 and signed else arithmetic.integer_range(min(bits, 32), signed, narrow)
            self.fold_constant(node, integers, scale, np.asarray(zero, np.float32), value, bounds)
            return
        if bits == 1 and signed:
            raise _refuse(node, "a signed 1-bit (bipolar) quantiser on an activation has no integer kernel",
                          "quantise activations to 2-8 bits")
        if bits > 8:
            raise _refuse(node, f"{bits}-bit activations have no integer kernels", "quantise activations to 2-8 bits")
        if mode.upper() not in ("ROUND", "HALF_EVEN"):
            raise _refuse(node, f"rounding mode {mode} on an activation has no QuantizeLinear equivalent "
                                "(QuantizeLinear rounds half to even)", "export activations with rounding ROUND")
        if not _integral(zero):
            raise _refuse(node, "the zero point is not an integer", "use integer zero points on activations")
        self.activation(node, scale, zero, *arithmetic.integer_range(bits, signed, narrow))

    def activation(self, node: gs.Node, scale: np.ndarray, zero: np.ndarray, low: int, high: int) -> None:
        """``QuantizeLinear → [Clip(low, high)] → DequantizeLinear`` in place of ``node``'s quantiser.

        With a zero point other than 0, QONNX rounds ``x / scale + zero_point``
        after a float32 addition that may itself round (and land on a tie),
        where ``QuantizeLinear`` rounds ``x / scale`` and adds the zero point to
        the integer: the two differ on rare inputs.  Such quantisers compute
        QONNX's sum with ``Div`` and ``Add`` and quantise it with scale 1.
        """
        if np.any(zero != 0):
            self.asymmetric_activation(node, scale, zero, low, high)
            return
        data, output = node.inputs[0], node.outputs[0]
        shape, declared, axis, storage = _activation_layout(
            node, data, scale, zero, low, high,
            "its scale and zero point vary along several axes or do not fit int8/uint8",
            "quantise activations per tensor or per channel with 8 bits or fewer")
        scale_values, zero_values = _along_layout(scale, zero, shape, axis)
        attrs = {"axis": axis} if axis is not None else {}
        stem = node.name or output.name
        scale_c = new_constant(self.namer, f"{stem}_scale", scale_values.astype(np.float32))
        zero_c = new_constant(self.namer, f"{stem}_zero_point", zero_values.astype(storage))
        detach(node)
        quantised = gs.Variable(self.namer(f"{stem}_quantized"), dtype=storage, shape=declared)
        new_node(self.graph, self.namer, "QuantizeLinear", f"{stem}_quantize", [data, scale_c, zero_c], [quantised],
                 attrs)
        quantised = self.clip(quantised, low, high, storage, declared, stem)
        new_node(self.graph, self.namer, "DequantizeLinear", f"{stem}_dequantize", [quantised, scale_c, zero_c],
                 [output], attrs)

    def clip(self, quantised: gs.Variable, low: int, high: int, storage: type, declared: list[int] | None,
             stem: str) -> gs.Variable:
        """``quantised`` through ``Clip(low, high)`` when that is narrower than ``storage``'s range."""
        info = np.iinfo(storage)
        if (low, high) == (info.min, info.max):
            return quantised
        clipped = gs.Variable(self.namer(f"{stem}_clipped"), dtype=storage, shape=declared)
        new_node(self.graph, self.namer, "Clip", f"{stem}_clip",
                 [quantised, new_constant(self.namer, f"{stem}_min", np.array(low, storage)),
                  new_constant(self.namer, f"{stem}_max", np.array(high, storage))], [clipped])
        return clipped

    def asymmetric_activation(self, node: gs.Node, scale: np.ndarray, zero: np.ndarray, low: int, high: int) -> None:
        """``Div(scale) → Add(zero point) → QuantizeLinear(1) → [Clip] → DequantizeLinear(scale, zero pt.)``."""
        data, output = node.inputs[0], node.outputs[0]
        shape = None if data.shape is None else list(data.shape)
        stem = node.name or output.name
        detach(node)
        scaled = gs.Variable(self.namer(f"{stem}_scaled"), dtype=np.float32, shape=shape)
        new_node(self.graph, self.namer, "Div", f"{stem}_scaled",
                 [data, new_constant(self.namer, f"{stem}_scale", np.asarray(scale, np.float32))], [scaled])
        offset = gs.Variable(self.namer(f"{stem}_offset"), dtype=np.float32, shape=shape)
        new_node(self.graph, self.namer, "Add",
                 f"{stem}_offset", [scaled, new_constant(self.namer, f"{stem}_zero", np.asarray(zero, np.float32))],
                 [offset])
        self.activation_from_integers(node, offset, output, scale, zero, low, high, stem)

    # -- BipolarQuant ---------------------------------------------------------------------------------------------

    def bipolar(self, node: gs.Node) -> None:
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            raise _refuse(node, f"{len(node.inputs)} inputs where BipolarQuant has 2 (x, scale)",
                          "export the model with qonnx/Brevitas again")
        scale = _parameter(node, 1, "scale")
        data = constant_value(node.inputs[0])
        if data is None:
            raise _refuse(node, "a bipolar quantiser on an activation has no integer kernel",
                          "only BipolarQuant on constant weights lowers (to ±1 weights)")
        integers = np.where(np.asarray(data, np.float32) >= 0, 1, -1).astype(np.int64)
        self.fold_constant(node, integers, scale, np.zeros((), np.float32), arithmetic.bipolar_quant(data, scale),
                           (-1, 1))

    # -- Trunc ----------------------------------------------------------------------------------------------------

    def trunc(self, node: gs.Node) -> None:
        if len(node.inputs) not in (5, 6) or len(node.outputs) != 1:
            raise _refuse(node, f"{len(node.inputs)} inputs where Trunc has 5 (version 1) or 6 (version 2)",
                          "export the model with qonnx/Brevitas again")
        mode = str(_attribute(node, "rounding_mode", "FLOOR"))
        try:
            arithmetic.rounding(mode)
        except ValueError as error:
            raise _refuse(node, str(error), "use one of QONNX's rounding modes") from None
        scale, zero = _parameter(node, 1, "scale"), _parameter(node, 2, "zero point")
        input_bits = _bit_width(node, 3)
        data = constant_value(node.inputs[0])
        if len(node.inputs) == 5:  # version 1: drops low bits and keeps the scale, without a clamp
            output_bits = _bit_width(node, 4)
            if data is None:
                raise _refuse(node, "Trunc version 1 (no output scale, no clamp) on an activation has no integer "
                                    "equivalent", "export with QONNX opset 2 (Brevitas 0.10 or newer)")
            node.outputs[0].to_constant(arithmetic.trunc_v1(data, scale, zero, input_bits, output_bits, mode))
            detach(node)
            return
        output_scale, output_bits = _parameter(node, 4, "output scale"), _bit_width(node, 5)
        signed, narrow = bool(_attribute(node, "signed", 1)), bool(_attribute(node, "narrow", 0))
        if data is not None:
            node.outputs[0].to_constant(
                arithmetic.trunc(data, scale, zero, output_scale, output_bits, signed, narrow, mode))
            detach(node)
            return
        divisor = arithmetic.trunc_shift(scale, output_scale)
        low, high = arithmetic.integer_range(output_bits, signed, narrow)
        output_zero = np.asarray(zero, np.float32) / divisor
        if not _integral(zero) or not _integral(output_zero):
            raise _refuse(node, "the zero point (or its value after the shift) is not an integer",
                          "use integer zero points")
        if output_bits > 8:
            raise _refuse(node, f"{output_bits}-bit outputs have no integer kernels", "truncate to 8 bits or fewer")
        if mode.upper() in ("ROUND", "HALF_EVEN") and not np.any(zero != 0) and not np.any(output_zero != 0):
            if self.integer_trunc(node, scale, divisor, output_scale, low, high):
                return
        self.lower_trunc(node, scale, zero, divisor, output_scale, output_zero, low, high, mode)

    def integer_trunc(self, node: gs.Node, scale: np.ndarray, divisor: np.float32, output_scale: np.ndarray,
                      low: int, high: int) -> bool:
        """``DQ(q, s) → AveragePool → Trunc(ROUND)`` as an integer depthwise sum: False when it does not apply.

        Brevitas' ``TruncAvgPool2d`` divides the pool by ``scale = s / area``,
        so qonnx rounds ``x / scale`` back to the integer window sum ``S`` and
        then rounds ``S / divisor`` half to even.  A depthwise Conv with weights
        ``1 / divisor`` (scale of a ``DequantizeLinear`` of ones) on the same
        ``DQ(q, s)`` and a ``QuantizeLinear`` of scale ``s`` is the QLinearConv
        ``round(S · (s / divisor) / s)``: the float32 multiplier is exactly
        ``1 / divisor`` (a power of two), so it computes the same integer —
        provided qonnx's float pool recovers ``S`` exactly, which holds when its
        rounding errors stay below a quarter step: at most ``area · 256`` in
        magnitude, ``area + 2`` float32 roundings and the scale's own error.
        """
        pool = node.inputs[0].inputs[0] if len(node.inputs[0].inputs) == 1 else None
        if pool is None or pool.op != "AveragePool" or pool.domain not in (None, "", "ai.onnx"):
            return False
        if len(node.inputs[0].outputs) != 1 or len(pool.outputs) != 1 or not pool.inputs:
            return False
        source = pool.inputs[0]
        dequantize = source.inputs[0] if len(source.inputs) == 1 else None
        if dequantize is None or dequantize.op != "DequantizeLinear" or len(dequantize.inputs) < 2:
            return False
        input_scale = constant_value(dequantize.inputs[1])
        input_zero = (constant_value(dequantize.inputs[2]) if len(dequantize.inputs) > 2 and dequantize.inputs[2].name
                      else np.zeros(()))
        if input_scale is None or input_zero is None or input_scale.size != 1 or np.any(input_zero != 0):
            return False
        kernel = [int(size) for size in pool.attrs.get("kernel_shape", [])]
        pads = [int(pad) for pad in pool.attrs.get("pads", [0] * 2 * len(kernel))]
        shape = source.shape
        if not kernel or shape is None or len(shape) != len(kernel) + 2 or not isinstance(shape[1], int):
            return False
        if pool.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", b"NOTSET") or int(pool.attrs.get("ceil_mode", 0)):
            return False
        if any(int(d) != 1 for d in pool.attrs.get("dilations", [])):
            return False
        if any(pads) and not int(pool.attrs.get("count_include_pad", 0)):
            return False  # the divisor then changes at the borders
        area = int(np.prod(kernel))
        s = np.float32(input_scale.reshape(-1)[0])
        if not s > 0 or np.asarray(scale).size != 1 or area * 256 * (area + 2) > 2**22:
            return False
        mismatch = abs(float(np.float32(np.asarray(scale).reshape(-1)[0])) * area / float(s) - 1.0)
        if mismatch * area * 256 > 0.25:
            return False
        channels = int(shape[1])
        stem = node.name or node.outputs[0].name
        ones = new_constant(self.namer, f"{stem}_window", np.ones((channels, 1, *kernel), np.int8))
        weights = gs.Variable(self.namer(f"{stem}_window_weights"), dtype=np.float32, shape=[channels, 1, *kernel])
        new_node(self.graph, self.namer, "DequantizeLinear", f"{stem}_window_dequantize",
                 [ones, new_constant(self.namer, f"{stem}_window_scale", np.float32(1.0) / np.float32(divisor)),
                  new_constant(self.namer, f"{stem}_window_zero_point", np.array(0, np.int8))], [weights])
        output = node.outputs[0]
        sums = gs.Variable(self.namer(f"{stem}_sums"), dtype=np.float32, shape=output.shape)
        attrs = {"group": channels, "kernel_shape": kernel, "pads": pads,
                 "strides": [int(step) for step in pool.attrs.get("strides", [1] * len(kernel))]}
        new_node(self.graph, self.namer, "Conv", f"{stem}_window_sum", [source, weights], [sums], attrs)
        detach(node)
        detach(pool)
        self.activation_from_integers(node, sums, output, output_scale, np.zeros((), np.float32), low, high, stem,
                                      quantize_scale=s)
        return True

    def lower_trunc(self, node: gs.Node, scale: np.ndarray, zero: np.ndarray, divisor: np.float32,
                    output_scale: np.ndarray, output_zero: np.ndarray, low: int, high: int, mode: str) -> None:
        """Div → [Add] → Round → Div → ``mode``'s rounding → QuantizeLinear(1) → [Clip] → DequantizeLinear."""
        data, output = node.inputs[0], node.outputs[0]
        shape = None if data.shape is None else list(data.shape)
        stem = node.name or output.name
        detach(node)

        def step(op: str, inputs: list[gs.Tensor], what: str) -> gs.Variable:
            result = gs.Variable(self.namer(f"{stem}_{what}"), dtype=np.float32, shape=shape)
            new_node(self.graph, self.namer, op, f"{stem}_{what}", inputs, [result])
            return result

        def const(what: str, value: Any) -> gs.Constant:
            return new_constant(self.namer, f"{stem}_{what}", np.asarray(value, np.float32))

        value = step("Div", [data, const("scale", scale)], "scaled")
        if np.any(zero != 0):
            value = step("Add", [value, const("zero_point", zero)], "offset")
        value = step("Round", [value], "integers")
        value = step("Div", [value, const("shift", divisor)], "shifted")
        if mode.upper() not in ("ROUND", "HALF_EVEN"):  # ROUND: QuantizeLinear below rounds half to even itself
            value = step("Clip", [value, const("low", low), const("high", high)], "clamped")
            value = self.rounded(value, mode, step, const)
        self.activation_from_integers(node, value, output, output_scale, output_zero, low, high, stem)

    def rounded(self, value: gs.Variable, mode: str, step: Any, const: Any) -> gs.Variable:
        """``value`` rounded with QONNX's ``mode`` in standard float ops (all exact on these small values)."""
        upper = mode.upper()
        if upper in ("FLOOR", "CEIL"):
            return step("Floor" if upper == "FLOOR" else "Ceil", [value], "rounded")
        positive = step("Max", [value, const("zero", 0.0)], "positive")
        negative = step("Min", [value, const("zero", 0.0)], "negative")
        if upper in ("HALF_UP", "HALF_DOWN"):
            half = 0.5 if upper == "HALF_UP" else -0.5
            positive = step("Add", [positive, const("half", half)], "positive_half")
            negative = step("Add", [negative, const("half", -half)], "negative_half")
        positive = step("Floor" if upper in ("DOWN", "HALF_UP") else "Ceil", [positive], "positive_rounded")
        negative = step("Ceil" if upper in ("DOWN", "HALF_UP") else "Floor", [negative], "negative_rounded")
        return step("Add", [positive, negative], "rounded")

    def activation_from_integers(self, node: gs.Node, value: gs.Tensor, output: gs.Tensor, output_scale: np.ndarray,
                                 output_zero: np.ndarray, low: int, high: int, stem: str,
                                 quantize_scale: np.float32 = np.float32(1.0)) -> None:
        """``QuantizeLinear(value, quantize_scale, 0) → [Clip] → DequantizeLinear(output_scale, output_zero)``."""
        shape, declared, axis, storage = _activation_layout(
            node, value, output_scale, output_zero, low, high,
            "its output scale varies along several axes or its range does not fit int8/uint8",
            "truncate per tensor to 8 bits or fewer")
        quantised = gs.Variable(self.namer(f"{stem}_quantized"), dtype=storage, shape=declared)
        new_node(self.graph, self.namer, "QuantizeLinear", f"{stem}_quantize",
                 [value, new_constant(self.namer, f"{stem}_unit", np.array(quantize_scale, np.float32)),
                  new_constant(self.namer, f"{stem}_no_offset", np.array(0, storage))], [quantised])
        quantised = self.clip(quantised, low, high, storage, declared, stem)
        scale_values, zero_values = _along_layout(output_scale, output_zero, shape, axis)
        new_node(self.graph, self.namer, "DequantizeLinear", f"{stem}_dequantize",
                 [quantised, new_constant(self.namer, f"{stem}_output_scale", scale_values.astype(np.float32)),
                  new_constant(self.namer, f"{stem}_output_zero_point", zero_values.astype(storage))], [output],
                 {"axis": axis} if axis is not None else {})


_HANDLERS = {"Quant": _Rewriter.quant, "BipolarQuant": _Rewriter.bipolar, "Trunc": _Rewriter.trunc}


def lower_qonnx(graph: gs.Graph) -> int:
    """Rewrite every QONNX node of ``graph`` (see the module docstring); returns how many were rewritten."""
    nodes = [node for node in graph.nodes if node.domain == QONNX_DOMAIN and node.op in _HANDLERS]
    if not nodes:
        return 0
    rewriter = _Rewriter(graph)
    for node in nodes:
        _HANDLERS[node.op](rewriter, node)
    graph.cleanup(remove_unused_graph_inputs=False).toposort()
    return len(nodes)


class LowerQonnx(Pass[gs.Graph]):
    """Rewrite QONNX's Quant/Trunc/BipolarQuant into standard ops; returns the number of nodes rewritten."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        return lower_qonnx(graph) or None
