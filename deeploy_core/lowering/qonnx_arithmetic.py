"""QONNX's integer quantisation arithmetic in numpy: integer ranges, rounding modes, Quant, Trunc, BipolarQuant.

The lowering folds QONNX ops on constants with these functions, so they must
compute what qonnx's own executor computes, in the same float32 steps:
``Quant`` scales (``x / scale + zero_point``), clamps to the bit width's range
*before* rounding, rounds with its mode, and dequantises (``(q - zero_point) *
scale``); ``Trunc`` (version 2, made by Brevitas' ``TruncAvgPool2d``) recovers
the integer sum, divides it by the power of two between its input and output
scales, clamps, rounds and rescales.  Clamping to integer bounds commutes with
every monotone rounding, so ``round(clamp(v)) == clamp(round(v))``: that is why
an activation's ``Quant`` can become ``QuantizeLinear`` (round, then saturate).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Rounding = Callable[[np.ndarray], np.ndarray]


def _toward_zero(values: np.ndarray) -> np.ndarray:
    return np.trunc(values)


def _away_from_zero(values: np.ndarray) -> np.ndarray:
    return np.sign(values) * np.ceil(np.abs(values))


def _half_up(values: np.ndarray) -> np.ndarray:
    """Ties away from zero."""
    return np.sign(values) * np.floor(np.abs(values) + np.asarray(0.5, values.dtype))


def _half_down(values: np.ndarray) -> np.ndarray:
    """Ties toward zero."""
    return np.sign(values) * np.ceil(np.abs(values) - np.asarray(0.5, values.dtype))


ROUNDING_MODES: dict[str, Rounding] = {
    "ROUND": np.round,  # ties to even
    "HALF_EVEN": np.round,
    "CEIL": np.ceil,
    "FLOOR": np.floor,
    "UP": _away_from_zero,
    "DOWN": _toward_zero,
    "HALF_UP": _half_up,
    "HALF_DOWN": _half_down,
}
"""Every rounding mode QONNX defines (names compared upper-case, as qonnx does)."""


def rounding(mode: str) -> Rounding:
    """The rounding function of ``mode`` (a ``ValueError`` naming the known modes otherwise)."""
    try:
        return ROUNDING_MODES[mode.upper()]
    except KeyError:
        raise ValueError(f"unknown rounding mode {mode!r} (QONNX defines {', '.join(ROUNDING_MODES)})") from None


def integer_range(bits: int, signed: bool, narrow: bool) -> tuple[int, int]:
    """The integers a ``bits``-wide QONNX quantiser produces: narrow drops the lowest signed / highest unsigned one."""
    if signed:
        return -(1 << (bits - 1)) + int(narrow), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1 - int(narrow)


def quant_integers(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, bits: int, signed: bool, narrow: bool,
                   mode: str) -> np.ndarray:
    """The rounded integers (as float32, before ``- zero_point``) of QONNX ``Quant`` with ``bits >= 2``."""
    low, high = integer_range(bits, signed, narrow)
    scaled = np.asarray(x, np.float32) / np.asarray(scale, np.float32) + np.asarray(zero_point, np.float32)
    clamped = np.clip(scaled, np.float32(low), np.float32(high))
    return rounding(mode)(clamped).astype(np.float32)


def quant(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, bits: int, signed: bool, narrow: bool,
          mode: str) -> np.ndarray:
    """QONNX ``Quant``: ``(q - zero_point) * scale``; one signed bit is bipolar (``±1``) as qonnx executes it."""
    scale32, zero32 = np.asarray(scale, np.float32), np.asarray(zero_point, np.float32)
    if bits == 1 and signed:
        scaled = np.asarray(x, np.float32) / scale32 + zero32
        integers = np.where(scaled >= 0, np.float32(1), np.float32(-1))
    else:
        integers = quant_integers(x, scale, zero_point, bits, signed, narrow, mode)
    return ((integers - zero32) * scale32).astype(np.float32)


def bipolar_quant(x: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """QONNX ``BipolarQuant``: ``+scale`` where ``x >= 0``, ``-scale`` elsewhere."""
    signs = np.where(np.asarray(x, np.float32) >= 0, np.float32(1), np.float32(-1))
    return (signs * np.asarray(scale, np.float32)).astype(np.float32)


def trunc_shift(scale: np.ndarray, output_scale: np.ndarray) -> np.float32:
    """Trunc's divisor: the power of two nearest (in log2) to ``output_scale / scale``, as qonnx computes it."""
    ratio = np.asarray(output_scale, np.float32) / np.asarray(scale, np.float32)
    return np.float32(2.0 ** np.round(np.log2(ratio)))


def trunc(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, output_scale: np.ndarray, output_bits: int,
          signed: bool, narrow: bool, mode: str) -> np.ndarray:
    """QONNX ``Trunc`` version 2 (six inputs; the input bit width does not enter the arithmetic)."""
    zero32 = np.asarray(zero_point, np.float32)
    integers = np.round(np.asarray(x, np.float32) / np.asarray(scale, np.float32) + zero32)
    divisor = trunc_shift(scale, output_scale)
    low, high = integer_range(output_bits, signed, narrow)
    shifted = np.clip(integers / divisor, np.float32(low), np.float32(high))
    rounded = rounding(mode)(shifted).astype(np.float32)
    return ((rounded - zero32 / divisor) * np.asarray(output_scale, np.float32)).astype(np.float32)


def trunc_v1(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, input_bits: int, output_bits: int,
             mode: str) -> np.ndarray:
    """QONNX ``Trunc`` version 1 (five inputs): drop ``input_bits - output_bits`` low bits, keep the scale."""
    zero32, scale32 = np.asarray(zero_point, np.float32), np.asarray(scale, np.float32)
    integers = np.round(np.asarray(x, np.float32) / scale32 + zero32)
    rounded = rounding(mode)(integers / np.float32(2.0 ** (input_bits - output_bits))).astype(np.float32)
    return ((rounded - zero32) * scale32).astype(np.float32)
