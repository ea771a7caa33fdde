"""TFLite's FullyConnected on CMSIS-NN: ``arm_fully_connected_s8`` / ``arm_fully_connected_per_channel_s8``.

Serves fixed-point mode's QGemm whose B is a constant symmetric int8 matrix
stored [N, K] (``transB=1``; :mod:`~deeploy_cortex_m.ops.fc_weights` puts
tf2onnx's [K, N] weights there at compile time), an int32 bias or none, int8
activations and a per-tensor or per-output-channel weight scale.  Leading
dimensions of A are rows of one batch (``input_dims.n``).

Rounding: LiteRT's FullyConnected rounds once (the exact 64-bit product,
halves up), Conv twice.  CMSIS-NN's ``arm_nn_requantize`` is a static inline
whose rounding ``CMSIS_NN_USE_SINGLE_ROUNDING`` selects, so the macro is
defined for this path's translation units only (:func:`_defines`): the
fully connected kernels and the two vector-matrix products they call
(``arm_nn_vec_mat_mult_t_s8``, also reached by ``arm_batch_matmul_s8`` and
``arm_svdf_s8``; ``..._per_ch_s8``, by nothing else).  No convolution file
calls these functions, so convolutions keep CMSIS-NN's (and TFLite Conv's)
double rounding even when they share a build.

Kernel sums: on cores without MVE (Cortex-M4/M7)
``arm_fully_connected_s8_get_buffer_size`` is 0 and the vector-matrix
products never read ``ctx->buf`` (the input offset is applied per element), so
no buffer is passed.  On Helium (Cortex-M55) they start each output from
``ctx->buf[i]``, which TFLite Micro fills at start-up with
``arm_vector_sum_s8``: the bias plus the input offset times the row's weight
sum (the bias argument is then ignored).  The weights are constants, so the
sums are computed here, at compile time, into a flash table the context points
at: no arena, no start-up pass.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_core.plugin_api import tflite_parameters as tfl

from deeploy_cortex_m.ops.cmsis_sources import sources
from deeploy_cortex_m.ops.cmsis_call import (
    activation_range, cmsis_mapper, int8, int_table, output, per_tensor, quantised, require_tflite,
)

SINGLE_ROUNDING = ("CMSIS_NN_USE_SINGLE_ROUNDING",)
MAX_SINGLE_ROUNDING_SHIFT = 30
"""Single rounding shifts the 64-bit product right by ``31 - shift``: at least one bit."""


class CmsisFullyConnectedParser(NodeParser):
    """QGemm standing for TFLite's FullyConnected (int8, symmetric [N, K] weights, int32 bias or none)."""

    inputs = (9, 9)

    def __init__(self, per_channel: bool, mve: bool) -> None:
        self.per_channel = per_channel
        self.mve = mve

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        require_tflite(node)
        if int(self.attribute(node, "transA", 0)) or float(self.attribute(node, "alpha", 1.0)) != 1.0:
            raise NodeMismatch("attribute", "transA=1 or alpha≠1: not a fully connected layer")
        if not int(self.attribute(node, "transB", 0)):
            raise NodeMismatch("attribute", "B is stored [K, N]; CMSIS-NN reads [N, K] (transB=1)")
        a, a_scale, a_zero = quantised(ctxt, node, 0)
        b, b_scale, b_zero = quantised(ctxt, node, 3)
        y, y_scale, y_zero = output(ctxt, node, 7)
        int8(a, b, y)
        x_scale, za = per_tensor(a_scale, a_zero, "A")
        if b.values is None or len(b.shape) != 2:
            raise NodeMismatch("shape", "B must be a constant matrix")
        n, k = b.shape
        if a.shape[-1] != k or y.shape[-1] != n:
            raise NodeMismatch("shape", f"A's last axis {a.shape[-1]} / Y's {y.shape[-1]} do not match B [{n}, {k}]")
        if np.any(b_zero):
            raise NodeMismatch("attribute", "B's zero points must be 0 (CMSIS-NN's weights are symmetric)")
        if b_scale.size not in (1, n):
            raise NodeMismatch("shape", f"B's scales must be per tensor or per output ({n})")
        scales = b_scale if np.any(b_scale != b_scale[0]) else b_scale[:1]
        if (scales.size > 1) != self.per_channel:
            raise NodeMismatch("shape", "per-channel scales" if scales.size > 1 else "one weight scale")
        bias, bias_values = "NULL", np.zeros(n, np.int64)
        if self.is_present(node, 6):
            c = ctxt[node.inputs[6].name]
            if c.dtype.numpy != np.int32 or c.numel != n or c.values is None:
                raise NodeMismatch("dtype", f"the bias must be a constant int32 vector of {n}")
            bias, bias_values = f"(const int32_t *){c.c_name}", np.asarray(c.values, np.int64).reshape(n)
        try:
            multipliers, shifts = tfl.linear_multipliers(x_scale, scales, y_scale)
        except tfl.TfliteParameterError as error:
            raise NodeMismatch("attribute", f"TFLite requantisation: {error}") from None
        if max(shifts) > MAX_SINGLE_ROUNDING_SHIFT:
            raise NodeMismatch("attribute", f"shift {max(shifts)} is beyond single rounding's {MAX_SINGLE_ROUNDING_SHIFT}")
        low, high = activation_range(node)
        rows = math.prod(a.shape[:-1])
        sums = kernel_sums(np.asarray(b.values), bias_values, -za) if self.mve else None
        return {"code": _call(self.per_channel, multipliers, shifts, rows, k, n, za, y_zero, low, high,
                              a.c_name, b.c_name, bias, y.c_name, sums),
                "macs": rows * n * k, "size": y.numel,
                "requantization": {"arithmetic": "tflite", "rounding": "single", "kernel": _function(self.per_channel),
                                   "multiplier": multipliers[0] if len(multipliers) == 1 else multipliers,
                                   "shift": shifts[0] if len(shifts) == 1 else shifts,
                                   "zero_point": y_zero, "range": [low, high]}}


def kernel_sums(weights: np.ndarray, bias: np.ndarray, input_offset: int) -> list[int]:
    """``arm_vector_sum_s8`` of [N, K] symmetric ``weights``: ``bias[i] + input_offset · Σ_j weights[i, j]`` in
    int32's wrap-around arithmetic."""
    sums = bias.astype(np.int64) + input_offset * weights.astype(np.int64).sum(axis=1)
    return [int(v) for v in ((sums + 2**31) % 2**32 - 2**31)]


def _function(per_channel: bool) -> str:
    return "arm_fully_connected_per_channel_s8" if per_channel else "arm_fully_connected_s8"


def _call(per_channel: bool, multipliers: list[int], shifts: list[int], rows: int, k: int, n: int, za: int, zy: int,
          low: int, high: int, a: str, b: str, bias: str, y: str, sums: list[int] | None) -> str:
    """The C block: dimensions as TFLite Micro passes them (filter ``n`` = K, output ``c`` = N), then the call;
    with ``sums`` (Helium), a context holding the kernel sums."""
    if per_channel:
        quant = (f"{int_table('cmsis_multiplier', multipliers)}\n{int_table('cmsis_shift', shifts)}\n"
                 "const cmsis_nn_per_channel_quant_params quant = {(int32_t *)cmsis_multiplier, "
                 "(int32_t *)cmsis_shift};")
    else:
        quant = f"const cmsis_nn_per_tensor_quant_params quant = {{{multipliers[0]}, {shifts[0]}}};"
    context = "const cmsis_nn_context ctx = {NULL, 0};"
    if sums is not None:
        context = (f"{int_table('cmsis_kernel_sums', sums)}\n"
                   f"const cmsis_nn_context ctx = {{(void *)cmsis_kernel_sums, {4 * len(sums)}}};")
    return f"""{{
{quant}
{context}
const cmsis_nn_fc_params fc = {{{-za}, 0, {zy}, {{{low}, {high}}}}};
const cmsis_nn_dims input_dims = {{{rows}, 1, 1, {k}}};
const cmsis_nn_dims filter_dims = {{{k}, 1, 1, {n}}};
const cmsis_nn_dims bias_dims = {{1, 1, 1, {n}}};
const cmsis_nn_dims output_dims = {{{rows}, 1, 1, {n}}};
(void){_function(per_channel)}(&ctx, &fc, &quant, &input_dims, (const int8_t *){a}, &filter_dims, (const int8_t *){b},
    &bias_dims, {bias}, &output_dims, (int8_t *){y});
}}"""


def _defines(sources: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((source, SINGLE_ROUNDING) for source in sources)


def _mapper(per_channel: bool, mve: bool) -> NodeMapper:
    function = _function(per_channel)
    files = sources(function, mve)
    return cmsis_mapper(CmsisFullyConnectedParser(per_channel, mve), 9, f"QGemm CMSIS-NN {function}", files,
                        _defines(files))


def mappers(mve: bool) -> dict[str, tuple[NodeMapper, ...]]:
    """Op type -> the CMSIS-NN fully connected mappers (tried before generic C's QGemm) on the core's path."""
    return {"com.microsoft.QGemm": (_mapper(False, mve), _mapper(True, mve))}
