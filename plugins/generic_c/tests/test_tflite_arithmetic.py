"""TFLite's integer arithmetic: parameter derivation (tflite_arithmetic.py) and the C helpers (dcg_tflite.h).

Fixed-point mode promises LiteRT's int8 outputs bit for bit, so every
parameter must be derived as TFLite derives it (a multiplier one unit off
changes outputs) and every helper must round as TFLite's does.  The parameter
tests use values worked out by hand (ties, the 2^31 overflow, the flush of
tiny multipliers); the helper tests run ``dcg_tflite.h`` compiled with
``-std=c99 -pedantic`` and the undefined-behaviour sanitizer (aborting on the
first report) on tens of thousands of random and edge cases, against the
numpy model, which the LiteRT tests (test_tflite_kernels.py) hold to TFLite's
own kernels; the numpy model of exp and the reciprocal is also checked against
the real functions, so a wrong model could not pass by agreeing with itself.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from deeploy_generic_c.parsing import tflite_arithmetic as tfl
from deeploy_generic_c.platform import RUNTIME_DIR

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# ---------------------------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("real", "expected"), [
    (0.5, (2**30, 0)),                          # frexp(0.5) = (0.5, 0)
    (1.0, (2**30, 1)),                          # frexp(1) = (0.5, 1)
    (0.75, (3 * 2**29, 0)),
    ((2**31 + 1) / 2**32, (2**30 + 1, 0)),     # q·2^31 = 2^30 + 1/2: the tie goes away from zero (even would be 2^30)
    (1 - 2.0**-40, (2**30, 1)),                 # q·2^31 rounds up to 2^31: renormalised to (2^30, shift + 1)
    (2.0**-32, (2**30, -31)),                   # the smallest exponent kept
    (2.0**-33, (0, 0)),                         # shift -32: flushed to zero
    (0.0, (0, 0)),
    (3.0, (3 * 2**29, 2)),
])
def test_quantize_multiplier_hand_checked(real: float, expected: tuple[int, int]) -> None:
    assert tfl.quantize_multiplier(real) == expected


def test_quantize_multiplier_is_the_nearest_31_bit_value() -> None:
    """Away from ties, (m, shift) is the 31-bit significand nearest the real value (exact rational check)."""
    rng = np.random.default_rng(1)
    for real in np.exp(rng.uniform(math.log(1e-9), math.log(1e3), 2000)):
        multiplier, shift = tfl.quantize_multiplier(float(real))
        assert 2**30 <= multiplier < 2**31
        error = abs(Fraction(float(real)) - Fraction(multiplier) * Fraction(2) ** (shift - 31))
        assert error <= Fraction(2) ** (shift - 32)


def test_round_half_away() -> None:
    assert [tfl.round_half_away(v) for v in (2.5, -2.5, 0.49999999999999994, -0.5, 1.5, 7.0, -7.0, 0.0)] == \
        [3, -3, 0, -1, 2, 7, -7, 0]


def test_effective_scale_is_formed_in_double_from_float32_scales() -> None:
    """double(s_in) · double(s_w) / double(s_out), each step rounded to double, from the float32 scales."""
    s_in, s_w, s_out = 0.1, 0.2, 0.3  # as float32: 13421773·2^-27, 13421773·2^-26, 10066330·2^-25
    product = float(Fraction(13421773, 2**27) * Fraction(13421773, 2**26))  # rounded to double
    assert tfl.effective_scale(s_in, s_w, s_out) == float(Fraction(product) / Fraction(10066330, 2**25))
    assert tfl.linear_multipliers(s_in, np.array([s_w, 2 * s_w]), s_out) == ([1145324601, 1145324601], [-3, -2])


def test_effective_scale_in_float32_would_give_another_multiplier() -> None:
    """Scales of a real layer where float32 arithmetic (ONNX Runtime's order) moves the multiplier by 102."""
    s_in, s_w, s_out = 0.05478677153587341, 0.0029038835782557726, 0.00046558689791709185
    assert tfl.quantize_multiplier(tfl.effective_scale(s_in, s_w, s_out)) == (1467621350, -1)
    in_float32 = float(np.float32(s_in) * np.float32(s_w) / np.float32(s_out))
    assert tfl.quantize_multiplier(in_float32) == (1467621248, -1)


def test_add_parameters_hand_checked() -> None:
    parameters = tfl.add_parameters(0.5, 0.25, 0.5)  # twice the larger scale: 1.0
    assert parameters == tfl.AddParameters(20, (2**30, 0), (2**30, -1), (2**30, -18))  # 1/(2^20 · 0.5) = 2^-19


def test_add_refuses_an_output_multiplier_of_one() -> None:
    with pytest.raises(tfl.TfliteParameterError):
        tfl.add_parameters(0.5, 0.5, 2.0**-20)


def test_mul_parameters_hand_checked() -> None:
    assert tfl.mul_parameters(0.5, 0.25, 0.0625) == (2**30, 2)  # 2 = 0.5 · 2^2


@pytest.mark.parametrize(("scale", "expected"), [
    (1 / 16, tfl.SoftmaxParameters(2**30, 23, -248)),        # 2^-4 · 2^26 = 2^22; radius 31 · 2^26 / 2^23
    (0.1, tfl.SoftmaxParameters(1717986944, 23, -248)),     # 0.1f · 2^26 = 6710886.5, · 2^8 = 1717986944
    (0.5, tfl.SoftmaxParameters(2**30, 26, -31)),
    (1000.0, tfl.SoftmaxParameters(2**31 - 1, 31, 0)),      # capped at 2^31 - 1; radius 31/32 floors to 0
])
def test_softmax_parameters_hand_checked(scale: float, expected: tfl.SoftmaxParameters) -> None:
    assert tfl.softmax_parameters(scale) == expected


def test_activation_range() -> None:
    int8 = np.dtype(np.int8)
    assert tfl.activation_range(0.0, None, 0.1, -128, int8) == (-128, 127)
    assert tfl.activation_range(0.0, 6.0, 0.05, 3, int8) == (3, 123)          # 6 / 0.05f = 120 in float32
    assert tfl.activation_range(-1.25, 1.25, 0.5, 0, int8) == (-3, 3)         # ±2.5: halves away from zero
    assert tfl.activation_range(0.0, 6.0, 0.001, 0, int8) == (0, 127)         # beyond the type: clamped
    assert tfl.activation_range(None, 6.0, 0.05, 0, np.dtype(np.uint8)) == (0, 120)


# ---------------------------------------------------------------------------------------------------------------
# The numpy model of exp and 1/(1+x) against the real functions
# ---------------------------------------------------------------------------------------------------------------


def test_exp_model_approximates_exp() -> None:
    a = np.concatenate([np.linspace(-32 * 2**26, 0, 20001).astype(np.int64), [INT32_MIN, -1, 0]])
    got = tfl.exp_on_negative_values(a).astype(np.float64) / 2**31
    want = np.exp(a.astype(np.float64) / 2**26)
    assert np.max(np.abs(got - want)) < 3e-7  # the series' x^5/120 term on |x| <= 1/8
    assert tfl.exp_on_negative_values(np.array([0]))[0] == INT32_MAX


def test_reciprocal_model_approximates_reciprocal() -> None:
    x = np.concatenate([np.linspace(0, INT32_MAX, 20001).astype(np.int64), [1, INT32_MAX]])
    got = tfl.one_over_one_plus_x(x).astype(np.float64) / 2**31
    assert np.max(np.abs(got - 1 / (1 + x / 2**31))) < 5e-9


# ---------------------------------------------------------------------------------------------------------------
# The C helpers against the numpy model
# ---------------------------------------------------------------------------------------------------------------

PROGRAM = r"""
#include <stdio.h>
#include <stdint.h>
#ifdef PORTABLE /* the header as a compiler without GNU extensions sees it */
#pragma push_macro("__GNUC__")
#undef __GNUC__
#include "dcg_tflite.h"
#pragma pop_macro("__GNUC__")
#else
#include "dcg_tflite.h"
#endif
int main(void) {
    char op;
    long long a, b, c, d, e, f;
    while (scanf(" %c %lld %lld %lld %lld %lld %lld", &op, &a, &b, &c, &d, &e, &f) == 7) {
        int32_t bits = 0, r = 0;
        switch (op) {
        case 'h': r = dcg_tfl_high_mul((int32_t)a, (int32_t)b); break;
        case 'r': r = dcg_tfl_rounding_shift((int32_t)a, (int32_t)b); break;
        case 'm': r = dcg_tfl_multiply((int32_t)a, (int32_t)b, (int32_t)c); break;
        case 'q': r = dcg_tfl_requantize((int32_t)a, (int32_t)b, (int32_t)c, (int32_t)d, (int32_t)e, (int32_t)f); break;
        case 'S': r = dcg_tfl_multiply_single((int32_t)a, (int32_t)b, (int32_t)c); break;
        case 'Q': r = dcg_tfl_requantize_single((int32_t)a, (int32_t)b, (int32_t)c, (int32_t)d, (int32_t)e, (int32_t)f); break;
        case 's': r = dcg_tfl_saturating_shift_left((int32_t)a, (int32_t)b); break;
        case 'e': r = dcg_tfl_exp_on_negative_values((int32_t)a); break;
        case 'o': r = dcg_tfl_one_over_one_plus_x((int32_t)a); break;
        case 'c': r = dcg_tfl_softmax_reciprocal((int32_t)a, &bits); printf("%d ", (int)bits); break;
        default: return 2;
        }
        printf("%d\n", (int)r);
    }
    return 0;
}
"""


@pytest.fixture(scope="module", params=["builtin", "portable"])
def helpers(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The harness built strictly (C99, pedantic, warnings as errors) with UBSan aborting on any report."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler (gcc or cc) on PATH")
    folder = tmp_path_factory.mktemp(f"tflite-{request.param}")
    (folder / "harness.c").write_text(PROGRAM)
    flags = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Wconversion", "-Werror", "-O2",
             "-fsanitize=undefined", "-fno-sanitize-recover=all", f"-I{RUNTIME_DIR / 'include'}"]
    if request.param == "portable":
        flags += ["-DPORTABLE", "-Wno-pedantic"]  # the pragmas around the include
    subprocess.run([compiler, *flags, str(folder / "harness.c"), "-o", str(folder / "harness")], check=True)
    return folder / "harness"


def _run(harness: Path, op: str, rows: np.ndarray) -> list[list[int]]:
    rows = np.asarray(rows, np.int64).reshape(len(rows), -1)
    padded = np.zeros((len(rows), 6), np.int64)
    padded[:, :rows.shape[1]] = rows
    text = "".join(f"{op} {' '.join(map(str, row))}\n" for row in padded.tolist())
    result = subprocess.run([str(harness)], input=text, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]  # UBSan aborts with its report on stderr
    return [[int(v) for v in line.split()] for line in result.stdout.splitlines()]


def _int32(rng: np.random.Generator, count: int) -> np.ndarray:
    """Uniform int32 values with the limits and small magnitudes over-represented."""
    values = rng.integers(INT32_MIN, INT32_MAX, count, endpoint=True)
    special = np.array([INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX, 2**30, -(2**30)])
    values[: len(special)] = special
    small = rng.random(count) < 0.3
    values[small] = rng.integers(-1000, 1001, int(small.sum()))
    return values


def test_high_mul(helpers: Path) -> None:
    rng = np.random.default_rng(2)
    a, b = _int32(rng, 20000), _int32(rng, 20000)
    a[:81], b[:81] = np.repeat(a[:9], 9), np.tile(a[:9], 9)  # every pair of specials (INT32_MIN² included)
    got = np.array(_run(helpers, "h", np.stack([a, b], 1)))[:, 0]
    np.testing.assert_array_equal(got, tfl.saturating_rounding_doubling_high_mul(a, b))
    # against rationals: round(a·b / 2^31) with halves rounded up (toward +infinity, TFLite's nudge-and-truncate)
    exact = [math.floor(Fraction(int(x) * int(y), 2**31) + Fraction(1, 2)) for x, y in zip(a[:3000], b[:3000])]
    np.testing.assert_array_equal(got[:3000], np.clip(exact, INT32_MIN, INT32_MAX))
    ties = np.array(_run(helpers, "h", np.array([[3, 2**30], [-3, 2**30], [-1, 2**30], [1, 2**30]])))[:, 0]
    assert ties.tolist() == [2, -1, 0, 1]  # 1.5 → 2, -1.5 → -1, -0.5 → 0, 0.5 → 1


def round_away(value: Fraction) -> int:
    """The nearest integer, halves away from zero."""
    magnitude = abs(value)
    rounded = int(magnitude + Fraction(1, 2))
    return rounded if value >= 0 else -rounded


def test_rounding_shift_every_exponent(helpers: Path) -> None:
    rng = np.random.default_rng(3)
    x = _int32(rng, 20000)
    exponent = rng.integers(0, 32, 20000)
    ties = rng.integers(1, 32, 3000)  # x = (2k + 1) · 2^(e-1): exact halves, negative ones included
    x[:3000] = np.clip((2 * rng.integers(-2**20, 2**20, 3000) + 1) << (ties - 1), INT32_MIN, INT32_MAX)
    exponent[:3000] = ties
    exponent[3000:3100] = rng.integers(32, 63, 100)  # softmax's shifts beyond 31
    got = np.array(_run(helpers, "r", np.stack([x, exponent], 1)))[:, 0]
    np.testing.assert_array_equal(got, tfl.rounding_divide_by_pot(x, exponent))
    exact = [round_away(Fraction(int(v), 2 ** int(e))) for v, e in zip(x, exponent)]
    np.testing.assert_array_equal(got, exact)


def test_multiply_by_quantized_multiplier(helpers: Path) -> None:
    rng = np.random.default_rng(4)
    count = 20000
    x = _int32(rng, count)
    multiplier = rng.integers(2**30, 2**31, count)
    multiplier[:50] = [0, INT32_MAX, 2**30] * 16 + [1, 2]
    shift = rng.integers(-31, 1, count)
    left = rng.random(count) < 0.2  # positive shifts: TFLite shifts left first (wrapping on overflow)
    shift[left] = rng.integers(1, 32, int(left.sum()))
    got = np.array(_run(helpers, "m", np.stack([x, multiplier, shift], 1)))[:, 0]
    np.testing.assert_array_equal(got, tfl.multiply_by_quantized_multiplier(x, multiplier, shift))


def test_requantize(helpers: Path) -> None:
    rng = np.random.default_rng(5)
    count = 20000
    acc = _int32(rng, count)
    multiplier, shift = rng.integers(2**30, 2**31, count), rng.integers(-31, 3, count)
    zero = rng.integers(-128, 128, count)
    low = rng.integers(-128, 0, count)
    high = rng.integers(0, 128, count)
    got = np.array(_run(helpers, "q", np.stack([acc, multiplier, shift, zero, low, high], 1)))[:, 0]
    np.testing.assert_array_equal(got, tfl.requantize(acc, multiplier, shift, zero, low, high))


def test_multiply_single_rounding(helpers: Path) -> None:
    """FullyConnected's one rounding: the exact product, halves up, against numpy and against rationals."""
    rng = np.random.default_rng(10)
    count = 20000
    x = _int32(rng, count)
    multiplier = rng.integers(2**30, 2**31, count)
    multiplier[:30] = [0, INT32_MAX, 2**30] * 10
    shift = rng.integers(-31, 31, count)
    ties = rng.integers(-31, 1, 3000)  # x · m an odd multiple of 2^(30 - shift): exact halves, both signs
    x[:3000] = np.clip((2 * rng.integers(-2**10, 2**10, 3000) + 1) << (ties + 20), INT32_MIN, INT32_MAX)
    multiplier[:3000], shift[:3000] = 2**30, ties
    got = np.array(_run(helpers, "S", np.stack([x, multiplier, shift], 1)))[:, 0]
    np.testing.assert_array_equal(got, tfl.multiply_by_quantized_multiplier_single(x, multiplier, shift))
    exact = np.array([math.floor(Fraction(int(v) * int(m), 2 ** (31 - int(e))) + Fraction(1, 2))
                      for v, m, e in zip(x, multiplier, shift)], dtype=object)
    fits = np.array([INT32_MIN <= int(v) <= INT32_MAX for v in exact])  # else wrapped, as TFLite's cast
    assert fits[:3000].all() and fits.mean() > 0.5
    np.testing.assert_array_equal(got[fits], exact[fits].astype(np.int64))
    zero, low, high = rng.integers(-128, 128, count), rng.integers(-128, 0, count), rng.integers(0, 128, count)
    small = shift <= 0  # requantisation shifts (scales below one)
    rows = np.stack([x, multiplier, shift, zero, low, high], 1)[small]
    got = np.array(_run(helpers, "Q", rows))[:, 0]
    np.testing.assert_array_equal(got, tfl.requantize(x[small], multiplier[small], shift[small], zero[small],
                                                      low[small], high[small], rounding="single"))


def test_saturating_shift_left(helpers: Path) -> None:
    rng = np.random.default_rng(6)
    x, exponent = _int32(rng, 10000), rng.integers(1, 31, 10000)
    got = np.array(_run(helpers, "s", np.stack([x, exponent], 1)))[:, 0]
    np.testing.assert_array_equal(got, [int(tfl.saturating_left_shift(v, int(e))) for v, e in zip(x, exponent)])
    np.testing.assert_array_equal(got, np.clip(x << exponent, INT32_MIN, INT32_MAX))


def test_exp_on_negative_values(helpers: Path) -> None:
    rng = np.random.default_rng(7)
    a = -rng.integers(0, 2**31, 20000, endpoint=True)
    a[:40] = [0, -1, -2, INT32_MIN, -(2**24), -(2**24) - 1, -(2**24) + 1, -(2**26), *(-(np.arange(32) << 26))]
    got = np.array(_run(helpers, "e", a[:, None]))[:, 0]
    np.testing.assert_array_equal(got, tfl.exp_on_negative_values(a))


def test_one_over_one_plus_x(helpers: Path) -> None:
    rng = np.random.default_rng(8)
    x = rng.integers(0, INT32_MAX, 20000, endpoint=True)
    x[:4] = [0, 1, INT32_MAX, 2**30]
    got = np.array(_run(helpers, "o", x[:, None]))[:, 0]
    np.testing.assert_array_equal(got, tfl.one_over_one_plus_x(x))


def test_softmax_reciprocal(helpers: Path) -> None:
    """The reciprocal of a Q12.19 sum of 1 to 4096 terms, as (value, bits over unit)."""
    rng = np.random.default_rng(9)
    sums = rng.integers(2**19, 2**31, 5000)
    sums[:4] = [2**19, 2**30, INT32_MAX, 2**19 + 1]
    got = np.array(_run(helpers, "c", sums[:, None]))
    headroom = np.array([32 - int(s).bit_length() for s in sums])
    np.testing.assert_array_equal(got[:, 0], tfl.SOFTMAX_ACCUMULATION_INTEGER_BITS - headroom)
    np.testing.assert_array_equal(got[:, 1], tfl.one_over_one_plus_x((sums << headroom) - 2**31))
    # value · 2^-bits approximates 2^19 / sum (1/sum with the sum in Q12.19)
    approx = got[:, 1] / 2**31 * 2.0 ** -got[:, 0].astype(np.float64)
    np.testing.assert_allclose(approx, 2.0**19 / sums, rtol=1e-8)


# ---------------------------------------------------------------------------------------------------------------
# TfliteRequantiser's generated code
# ---------------------------------------------------------------------------------------------------------------

REQUANTISER_PROGRAM = r"""
#include <stdio.h>
#include <stdint.h>
#include "dcg_tflite.h"
static void requantise(const int32_t *accs, int8_t *out, int32_t n, int32_t channels) {
%(declarations)s
    for (int32_t i = 0; i < n; ++i) {
        const int32_t c = i %% channels;
        %(store)s
    }
}
int main(void) {
    static int32_t accs[%(n)d];
    static int8_t out[%(n)d];
    long long v;
    for (int32_t i = 0; i < %(n)d; ++i) { if (scanf("%%lld", &v) != 1) return 2; accs[i] = (int32_t)v; }
    requantise(accs, out, %(n)d, %(channels)d);
    for (int32_t i = 0; i < %(n)d; ++i) printf("%%d\n", out[i]);
    return 0;
}
"""


@pytest.mark.parametrize("op", ["QLinearConv", "QGemm"])
def test_requantiser_store_renders_tflite_arithmetic(op: str, tmp_path: Path) -> None:
    """declarations() + store() compiled as a kernel would use them: per channel, a narrowed clamp, both roundings."""
    from types import SimpleNamespace

    from deeploy_generic_c.kernels.tflite_requantiser import for_op

    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler (gcc or cc) on PATH")
    rng = np.random.default_rng(13)
    channels, n = 16, 16 * 500
    weight_scales = np.exp(rng.uniform(np.log(1e-4), np.log(1e-1), channels)).astype(np.float32)
    output = SimpleNamespace(name="y", dtype=SimpleNamespace(c_type="int8_t", numpy=np.int8))
    requantiser = for_op(op).from_parts(0.0235, weight_scales, 0.0417, channels, output, -5)  # type: ignore[arg-type]
    requantiser.low, requantiser.high = -5, 100  # as a fused Relu sets them after construction
    assert requantiser.describe()["rounding"] == ("single" if op == "QGemm" else "double")
    source = REQUANTISER_PROGRAM % {"declarations": requantiser.declarations(), "n": n, "channels": channels,
                                    "store": requantiser.store("out[i]", "accs[i]", "c")}
    (tmp_path / "requantiser.c").write_text(source)
    subprocess.run([compiler, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-fsanitize=undefined",
                    "-fno-sanitize-recover=all", f"-I{RUNTIME_DIR / 'include'}", str(tmp_path / "requantiser.c"),
                    "-o", str(tmp_path / "requantiser")], check=True)
    acc = rng.integers(-2**20, 2**20, n)
    acc[:64] = [INT32_MIN, INT32_MAX, 0, -1] * 16
    result = subprocess.run([str(tmp_path / "requantiser")], input="\n".join(map(str, acc)), capture_output=True,
                            text=True, check=True)
    got = np.array([int(line) for line in result.stdout.split()])
    channel = np.arange(n) % channels
    multipliers, shifts = np.array(requantiser.multipliers), np.array(requantiser.shifts)
    want = tfl.requantize(acc, multipliers[channel], shifts[channel], -5, -5, 100,
                          rounding="single" if op == "QGemm" else "double")
    np.testing.assert_array_equal(got, want)
    assert multipliers.tolist() == tfl.linear_multipliers(0.0235, weight_scales, 0.0417)[0]
