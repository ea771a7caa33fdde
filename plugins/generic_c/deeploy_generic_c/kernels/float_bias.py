"""Exact mode's integer Conv/Gemm with a float bias: int32 accumulation, then ONNX Runtime's float epilogue.

Some exporters cannot quantise a bias (Brevitas' dynamo QCDQ export leaves
it float), so the island is DequantizeLinear → Conv/Gemm(float bias) →
QuantizeLinear.  ONNX Runtime does not fuse it: it runs a float convolution
of the dequantised tensors, adds the bias and quantises.  These kernels keep
the integer product — the int32 accumulator is the exact sum the float
convolution approximates — and do the rest in float32 as ONNX Runtime does::

    v = (float)acc · (s_x · s_w[c])      the dequantised sum
    v = v + b[c]                         the float bias
    q = clamp(rint(v / s_y) + z_y)       QuantizeLinear: divide, round half to even

The result equals ONNX Runtime's except where its float summation (MLAS's
blocked, fused multiply-add order) rounds the sum to the other side of a
half step than the exact sum does: a flip of one step, rare (the tests
measure it on the Brevitas exports), never more.

No compiler may contract the product and the bias addition into a fused
multiply-add (one rounding where ONNX Runtime rounds twice): the product is
first clamped to per-channel bounds — two steps beyond where the output
saturates anyway, so the clamp can bind and no compiler can drop it — and
the clamped value, not a product, is what the bias is added to.  Each
rounding is its own assignment, so wider evaluation (``FLT_EVAL_METHOD`` 2)
still rounds to float.
"""

from __future__ import annotations

import numpy as np

from deeploy_core.plugin_api import Buffer, NodeMismatch
from deeploy_generic_c.parsing.common import c_float
from deeploy_generic_c.kernels.exact_quantisation import MAGIC

SATURATION_MARGIN = 2
"""Output steps beyond the range where the product's clamp sits: past it the output saturates either way."""


def float_bias(bias: Buffer | None) -> bool:
    """Whether a fused node's bias is float (exported unquantised) rather than int32."""
    return bias is not None and bias.dtype.is_float


class FloatBiasRequantiser:
    """``y = clamp(rint((float(acc) · s_x s_w[c] + b[c]) / s_y) + z)`` in float32; the FloatRequantiser interface."""

    def __init__(self, x_scale: float, w_scale: np.ndarray, y_scale: float, bias: Buffer, channels: int,
                 output: Buffer, zero: int) -> None:
        if bias.values is None:
            raise NodeMismatch("shape", "a float bias must be a constant")
        values = np.asarray(bias.values, np.float32).reshape(-1)
        if values.size not in (1, channels):
            raise NodeMismatch("shape", f"the float bias must have 1 or {channels} values, not {values.size}")
        self.bias_name, self.bias_per_channel = bias.c_name, values.size > 1
        w = np.asarray(w_scale, np.float32).reshape(-1)
        self.products = np.float32(x_scale) * w
        self.y_scale, self.output, self.zero = np.float32(y_scale), output, zero
        info = np.iinfo(output.dtype.numpy)
        self.low, self.high = int(info.min), int(info.max)
        per_channel_bias = np.broadcast_to(values, (channels,)).astype(np.float64)
        step = float(self.y_scale)
        self.floor = ((self.low - zero - SATURATION_MARGIN) * step - per_channel_bias).astype(np.float32)
        self.ceiling = ((self.high - zero + SATURATION_MARGIN) * step - per_channel_bias).astype(np.float32)

    @staticmethod
    def _table(name: str, values: np.ndarray) -> str:
        return f"static const float {name}[{values.size}] = {{{', '.join(c_float(float(v)) for v in values)}}};"

    def declarations(self) -> str:
        """Block-scope tables: the accumulator scales and each channel's clamp of the product (exact literals)."""
        return "\n".join([self._table("rq_scale", self.products), self._table("rq_floor", self.floor),
                          self._table("rq_ceiling", self.ceiling)])

    def store(self, target: str, acc: str, channel: str) -> str:
        """C statements turning the int32 expression ``acc`` of output ``channel`` into ``target``."""
        scale = channel if self.products.size > 1 else "0"
        bias = f"{self.bias_name}[{channel if self.bias_per_channel else '0'}]"
        low, high = f"{float(self.low - self.zero)!r}f", f"{float(self.high - self.zero)!r}f"
        return (f"{{ float rq_v = (float)({acc}) * rq_scale[{scale}]; "
                f"rq_v = rq_v < rq_floor[{channel}] ? rq_floor[{channel}] : "
                f"(rq_v > rq_ceiling[{channel}] ? rq_ceiling[{channel}] : rq_v); "
                f"rq_v = rq_v + (float){bias}; "
                f"rq_v = rq_v / {c_float(float(self.y_scale))}; "
                f"rq_v = rq_v < {low} ? {low} : (rq_v > {high} ? {high} : rq_v); "
                f"rq_v = rq_v + {MAGIC}; rq_v = rq_v - {MAGIC}; "
                f"{target} = ({self.output.dtype.c_type})((int32_t)rq_v + {self.zero}); }}")

    def describe(self) -> dict[str, object]:
        """The parameters shown by ``analyze`` and ``report.json``."""
        scales = [float(value) for value in self.products]
        return {"arithmetic": "float32", "bias": "float32", "accumulator_scale": scales[0] if len(scales) == 1
                else scales, "output_scale": float(self.y_scale), "zero_point": self.zero,
                "range": [self.low, self.high]}
