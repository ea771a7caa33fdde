"""numpy references of Deeploy's element-wise dialect ops: iGELU, iHardswish, iNoNorm, RequantizedAdd, the
requantised activations and divisions, one function per op.

Written from ``deeploy-op-semantics.md`` alone (section cited on each function), in the raw integer domain with
int64 intermediates, so the C kernels are checked against the document rather than against themselves.  Every
function takes and returns integer arrays; a network test can chain them (e.g. ``igelu`` then
``requant_shift`` for a fused pair).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.dialect_reference.basic import c_div, requant_bounds, requant_shift


def _int64(values: np.ndarray | int) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def _first(values: np.ndarray | int) -> int:
    """The first element of a parameter (Deeploy's fused kernels read ``*mul``, ``*add``, ``*shift``)."""
    return int(_int64(values).reshape(-1)[0])


def _shift_of(div: int) -> int:
    """log2 of a power-of-two divisor."""
    assert div >= 1 and div & (div - 1) == 0, f"{div} is not a power of two"
    return int(div).bit_length() - 1


def wrap8(values: np.ndarray) -> np.ndarray:
    """§1.4: a C cast to int8 without saturation, ((v + 128) mod 256) - 128."""
    return ((_int64(values) + 128) % 256) - 128


def shift_round_clamp(t: np.ndarray, shift: int, low: int, high: int) -> np.ndarray:
    """§2's tail: add 2^(s-1) when s > 0, arithmetic shift (floor), saturate."""
    t = _int64(t)
    if shift > 0:
        t = t + (1 << (shift - 1))
    return np.clip(t >> shift, low, high)


def igelu(x: np.ndarray, b: int, one: int) -> np.ndarray:
    """§4.5 iGELU: q = min(|x|, -b); L = sgn(x)·(one - (q + b)²); y = x·((one + L) >> 1), int32."""
    x = _int64(x)
    sign = np.sign(x)
    q = np.minimum(np.abs(x), -b)
    big_l = sign * (one - (q + b) ** 2)
    return x * ((one + big_l) >> 1)


def ihardswish(x: np.ndarray, one_over_six: int, three: int, six: int) -> np.ndarray:
    """§8 iHardswish: t = clamp(x + three, 0, six)·one_over_six; y = x·t, int32."""
    x = _int64(x)
    return x * (np.clip(x + three, 0, six) * one_over_six)


def deeploy_requant_int8(y: np.ndarray, mul: np.ndarray | int, add: np.ndarray | int, shift: np.ndarray | int) -> np.ndarray:
    """§4.5/§4.7/§8, the requantisation inside Deeploy's fused kernels: the first mul/add/shift only, then
    clamp((y·mul + add + 2^(s-1)) >> s, -128, 127) whatever n_levels says (``shift`` is the count itself)."""
    return shift_round_clamp(_int64(y) * _first(mul) + _first(add), _first(shift), -128, 127)


def requantized_igelu(x: np.ndarray, mul: np.ndarray | int, add: np.ndarray | int, shift: np.ndarray | int, b: int,
                      one: int) -> np.ndarray:
    """§4.5 RequantizediGELU as a model carries it: iGELU, then Deeploy's int8 requantisation."""
    return deeploy_requant_int8(igelu(x, b, one), mul, add, shift)


def requantized_ihardswish(x: np.ndarray, mul: int, add: int, shift: int, one_over_six: int, three: int,
                           six: int) -> np.ndarray:
    """§8 RequantizediHardswish: iHardswish, then Deeploy's int8 requantisation (attributes mul, add, shift)."""
    return deeploy_requant_int8(ihardswish(x, one_over_six, three, six), mul, add, shift)


def integer_div(a: np.ndarray, b: np.ndarray, delta: int, eps: int, eta: int) -> np.ndarray:
    """§4.6 IntegerDiv: num = Delta·eta·A, den = eta·B + eps, c_div(num + sgn(num)·(den >> 1), den), sgn(0) = +1."""
    num = np.int64(delta * eta) * _int64(a)
    den = np.int64(eta) * _int64(b) + np.int64(eps)
    half = den >> 1
    return c_div(num + np.where(num >= 0, half, -half), den)


def rq_integer_div(a: np.ndarray, b: np.ndarray, mul: np.ndarray | int, add: np.ndarray | int,
                   shift: np.ndarray | int, delta: int, eps: int, eta: int) -> np.ndarray:
    """§4.7 RQIntegerDiv: IntegerDiv, then Deeploy's int8 requantisation (requant_div holds the shift count)."""
    return deeploy_requant_int8(integer_div(a, b, delta, eps, eta), mul, add, shift)


def inonorm(x: np.ndarray, weights: np.ndarray, bias: np.ndarray, d: int, mul: int) -> np.ndarray:
    """§8 iNoNorm: wrap8(((x·w + b)·mul) >> log2 D), arithmetic shift, no saturation."""
    return wrap8(((_int64(x) * _int64(weights) + _int64(bias)) * mul) >> _shift_of(d))


@dataclass(frozen=True)
class RequantSpec:
    """One of RequantizedAdd's attribute groups (``rqs1_``, ``rqs2_``, ``rqsOut_``)."""

    mul: int
    add: int
    div: int
    n_levels: int = 256
    signed: bool = True

    def apply(self, values: np.ndarray) -> np.ndarray:
        """§2 with scalar mul/add: clamp((v·mul + add + 2^(s-1)) >> s) into n_levels/signed."""
        return shift_round_clamp(_int64(values) * self.mul + self.add, _shift_of(self.div),
                                 *requant_bounds(self.n_levels, self.signed))

    def attributes(self, prefix: str) -> dict[str, int | float]:
        """The attributes QuantLib writes for this group."""
        return {f"{prefix}_mul": self.mul, f"{prefix}_add": self.add, f"{prefix}_div": float(self.div),
                f"{prefix}_n_levels": self.n_levels, f"{prefix}_signed": int(self.signed)}


def requantized_add(a: np.ndarray, b: np.ndarray, rqs1: RequantSpec, rqs2: RequantSpec, rqs_out: RequantSpec) -> np.ndarray:
    """§8 RequantizedAdd, as this project defines it (the document leaves the rounding open): each input
    requantised by its own group as in §2, the two summed exactly, the sum requantised by ``rqsOut``."""
    return rqs_out.apply(rqs1.apply(a) + rqs2.apply(b))
