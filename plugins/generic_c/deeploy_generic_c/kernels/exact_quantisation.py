"""ONNX Runtime's DequantizeLinear and QuantizeLinear in float32, written so that no compiler can change them.

Exact mode's Add, Mul, average pools and Softmax reproduce what ONNX Runtime
computes for the unfused float graph DequantizeLinear → op → QuantizeLinear:

* DequantizeLinear is ``(float)((int32)q - zero) * scale``, one float32
  product per value.  An 8-bit operand has 256 values, so the kernels read
  them from a table computed here with numpy's float32 (the same single
  rounding).  The table also keeps every float product out of the kernels:
  a product followed by an addition is what C compilers may contract into a
  fused multiply-add (GCC does so across statements by default outside ISO
  mode, clang within expressions, and ``#pragma STDC FP_CONTRACT`` is not
  honoured by GCC), and a fused operation rounds once where ONNX Runtime
  rounds twice.  With tables, the kernels add table values, multiply two of
  them (Mul) or divide: nothing a compiler may fuse.
* QuantizeLinear divides by the scale in float32 (ONNX Runtime's MLAS divides;
  multiplying by the reciprocal lands on the other step near half steps),
  saturates to the output range less the zero point, rounds half to even
  (adding and subtracting 1.5 · 2^23: exact for the saturated range, no libm)
  and adds the zero point.  Each rounding step is its own assignment, so a
  compiler that evaluates float in wider precision (``FLT_EVAL_METHOD`` 2)
  still rounds it to float.

The output range may be narrowed by the node's ``output_min``/``output_max``
(a fused activation); quantisation is monotone, so clamping after it equals
ONNX Runtime's activation before it.  (``-ffast-math`` and its parts —
reassociation, reciprocal division — change float results by design; exact
mode needs them off, like any IEEE-exact code.)
"""

from __future__ import annotations

import numpy as np

from deeploy_core.plugin_api import Buffer, NodeMismatch
from deeploy_generic_c.parsing.common import c_float

MAGIC = "12582912.0f"
"""1.5 · 2^23: adding and subtracting it rounds a float of magnitude below 2^22 half to even."""


def eight_bit(buffer: Buffer, what: str) -> None:
    """The table-driven kernels take int8/uint8 tensors (what QLinear operators carry)."""
    if np.dtype(buffer.dtype.numpy) not in (np.dtype(np.int8), np.dtype(np.uint8)):
        raise NodeMismatch("dtype", f"{what} is {buffer.dtype}; the float32 kernels take int8 or uint8")


class DequantTable:
    """``static const float name[256]``: DequantizeLinear of every value of an 8-bit tensor."""

    def __init__(self, name: str, buffer: Buffer, scale: float, zero: int) -> None:
        eight_bit(buffer, f"tensor {buffer.name!r}")
        info = np.iinfo(buffer.dtype.numpy)
        self.name, self.offset = name, -int(info.min)
        codes = np.arange(int(info.min), int(info.max) + 1, dtype=np.int32)
        self.values = (codes - np.int32(zero)).astype(np.float32) * np.float32(scale)

    def declaration(self) -> str:
        rows = [", ".join(c_float(float(v)) for v in self.values[i:i + 8]) for i in range(0, self.values.size, 8)]
        return f"static const float {self.name}[{self.values.size}] = {{\n    " + ",\n    ".join(rows) + "\n};"

    def at(self, element: str) -> str:
        """C expression: the dequantised value of the integer expression ``element``."""
        return f"{self.name}[(int32_t)({element}) + {self.offset}]" if self.offset else f"{self.name}[{element}]"


class ExactQuantiser:
    """QuantizeLinear of a float32 value as ONNX Runtime computes it, clamped to ``[low, high]``."""

    def __init__(self, scale: float, output: Buffer, zero: int, low: int, high: int) -> None:
        if not (np.isfinite(scale) and scale > 0):
            raise NodeMismatch("attribute", f"output scale {scale} must be positive and finite")
        self.scale, self.output, self.zero, self.low, self.high = np.float32(scale), output, zero, low, high

    def store(self, target: str, value: str) -> str:
        """C statements quantising the float variable ``value`` into ``target``."""
        low, high = f"{float(self.low - self.zero)!r}f", f"{float(self.high - self.zero)!r}f"
        return (f"{{ float q_v = {value} / {c_float(float(self.scale))}; "
                f"q_v = q_v < {low} ? {low} : (q_v > {high} ? {high} : q_v); "
                f"q_v = q_v + {MAGIC}; q_v = q_v - {MAGIC}; "
                f"{target} = ({self.output.dtype.c_type})((int32_t)q_v + {self.zero}); }}")

    def describe(self, **extra: object) -> dict[str, object]:
        """The parameters shown by ``analyze`` and ``report.json``."""
        return {"arithmetic": "float32", "output_scale": float(self.scale), "zero_point": self.zero,
                "range": [self.low, self.high], **extra}
