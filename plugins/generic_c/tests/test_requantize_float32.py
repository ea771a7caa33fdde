"""``dcg_requantize_float32`` (runtime/include/dcg_requantize.h) equals float32 requantisation value for value.

ONNX Runtime requantises QLinearConv/QLinearMatMul/QGemm accumulators as
``clamp(rint(float(acc) · scale) + zero)`` in float32; the fixed-point kernels
do it on integers.  Each case is computed by a small C program built with the
helper and by numpy's float32 arithmetic (IEEE, round half to even, what
ONNX Runtime's kernels do), and the two must agree everywhere: near half
steps, where a single rounding of the exact product (the earlier 31-bit
multiplier) lands on the other step, beyond 2^24 where float(acc) itself
rounds, at the int32 limits and the saturation bounds.
"""

from __future__ import annotations

import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from deeploy_core.validate import Toolchain
from deeploy_generic_c.kernels.float32_rounding import significand_and_shift
from deeploy_generic_c.platform import RUNTIME_DIR

PROGRAM = """
#include <stdint.h>
#include <stdio.h>
#ifdef PORTABLE /* the header as a compiler without GNU extensions sees it (the C library's headers need them) */
#pragma push_macro("__GNUC__")
#undef __GNUC__
#include "dcg_requantize.h"
#pragma pop_macro("__GNUC__")
#else
#include "dcg_requantize.h"
#endif
int main(void) {
    long long acc, significand, shift, zero, low, high;
    while (scanf("%lld %lld %lld %lld %lld %lld", &acc, &significand, &shift, &zero, &low, &high) == 6)
        printf("%d\\n", (int)dcg_requantize_float32((int32_t)acc, (int32_t)significand, (int32_t)shift, (int32_t)zero,
                                                  (int32_t)low, (int32_t)high));
    return 0;
}
"""
RANGES = ((-128, 127), (0, 255))
"""int8 and uint8 outputs."""


def _cases(count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(acc int64, scale float32, zero, low, high): scales as ONNX Runtime forms them, accumulators mostly near ties."""
    rng = np.random.default_rng(0)
    sx, sw, sy = (np.exp(rng.uniform(np.log(low), np.log(high), count)).astype(np.float32)
                  for low, high in ((1e-4, 1.0), (1e-4, 0.1), (1e-3, 1.0)))
    scale = (sx * sw) / sy  # float32, ONNX Runtime's order
    scale[:8] = np.array([1.0, 0.5, 2.0**-30, 2.0**-60, 100.0, np.nextafter(1, 0), 3e-10, 1e-40], np.float32)
    bounds = np.array(RANGES)[rng.integers(0, 2, count)]
    low, high = bounds[:, 0], bounds[:, 1]
    zero = rng.integers(low, high + 1)
    steps = rng.integers(low - zero - 2, high - zero + 3).astype(np.float64) + 0.5  # half steps, in and out of range
    acc = np.rint(steps / scale.astype(np.float64)) + rng.integers(-2, 3, count)
    wide = rng.random(count) < 0.2  # anywhere in int32, large products beyond 2^24 included
    acc[wide] = rng.integers(-2**31, 2**31, int(wide.sum()))
    acc = np.clip(acc, -2**31, 2**31 - 1).astype(np.int64)
    acc[8:14] = [-2**31, 2**31 - 1, 0, 1, -1, 2**24 + 1]
    return acc, scale, zero, low, high


def _float32(acc: np.ndarray, scale: np.ndarray, zero: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    value = acc.astype(np.float32) * scale  # both float32: one IEEE product
    value = np.clip(value, (low - zero).astype(np.float32), (high - zero).astype(np.float32))
    return np.rint(value).astype(np.int64) + zero


def _single_rounding(acc: int, significand: int, shift: int, zero: int, low: int, high: int) -> int:
    """The exact product rounded once, half to even (what a fixed-point multiplier approximates at best)."""
    value = Fraction(acc * significand, 2**shift)
    return min(max(round(value) + zero, low), high)  # Fraction rounds half to even


@pytest.mark.parametrize("bit_length", ["builtin", "portable"])
def test_integer_requantisation_rounds_as_float32_on_20000_cases(tmp_path: Path, bit_length: str) -> None:
    """``portable`` reads the header without ``__GNUC__``: the helper counts bits in its loop, not with the builtin."""
    acc, scale, zero, low, high = _cases(20000)
    pairs = [significand_and_shift(value) for value in scale]
    source = tmp_path / "requantize.c"
    source.write_text(PROGRAM)
    toolchain = Toolchain.from_environment()
    flags = ["-DPORTABLE"] if bit_length == "portable" else []
    executable = tmp_path / "requantize"
    subprocess.run([*toolchain.compiler, *toolchain.extra_flags, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *flags,
                    f"-I{RUNTIME_DIR / 'include'}", str(source), "-o", str(executable)], check=True, capture_output=True)
    lines = [f"{a} {m} {s} {z} {lo} {hi}" for a, (m, s), z, lo, hi in zip(acc, pairs, zero, low, high)]
    run = subprocess.run([str(executable)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    actual = np.array(run.stdout.split(), np.int64)
    expected = _float32(acc, scale, zero, low, high)
    wrong = np.flatnonzero(actual != expected)
    assert wrong.size == 0, [(int(acc[i]), float(scale[i]), int(actual[i]), int(expected[i])) for i in wrong[:5]]
    once = np.array([_single_rounding(int(a), m, s, int(z), int(lo), int(hi))
                     for a, (m, s), z, lo, hi in zip(acc, pairs, zero, low, high)])
    assert np.count_nonzero(once != expected) > 50, "the cases must include products float32 rounds differently"
    assert np.count_nonzero((acc > 2**24) | (acc < -2**24)) > 1000 and np.any(actual == high) and np.any(actual == low)


def test_scales_decompose_exactly_into_significand_and_shift() -> None:
    _, scale, *_ = _cases(2000)
    for value in scale[scale > 2.0**-38]:  # smaller ones have their shift capped (they requantise everything to 0)
        significand, shift = significand_and_shift(value)
        assert Fraction(significand, 2**shift) == Fraction(float(value)) and significand < 2**24
