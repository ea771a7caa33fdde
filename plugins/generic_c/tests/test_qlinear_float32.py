"""Exact mode's float32 QLinear kernels against ONNX Runtime's unfused float graph, element for element.

Every case is a fused node with ``requantization="float32"``; the reference is
DequantizeLinear → Add/Mul/AveragePool/GlobalAveragePool/Softmax → [Clip] →
QuantizeLinear run by ONNX Runtime with graph optimisations off
(:mod:`qlinear_exact_cases`).  Random scales and zero points would almost
never land a result on a half step, where summation order decides, so the
pooling cases also use output scale = input scale with even window areas:
means of integers then sit exactly on ties, and a kernel that summed in
another order than MLAS's is caught (checked below by forcing the other
orders, which must mismatch).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from deeploy_core.plugins import PluginHost
from deeploy_generic_c.ops.pooling import qlinear_float32
from plugins.generic_c.tests.qlinear_exact_cases import Case, compare


def _scale(rng: np.random.Generator) -> float:
    return float(np.float32(np.exp(rng.uniform(np.log(0.003), np.log(0.3)))))


def _zero(rng: np.random.Generator, dtype: type) -> int:
    return int(rng.integers(-60, 61)) if dtype is np.int8 else int(rng.integers(0, 256))


def _binary_cases(rng: np.random.Generator) -> list[Case]:
    cases = []
    for op in ("QLinearAdd", "QLinearMul"):
        for dtype in (np.int8, np.uint8):
            for shapes in ([(1, 4, 6, 6), (1, 4, 6, 6)], [(1, 4, 6, 6), (1, 4, 1, 1)], [(2, 1, 5), (3, 1)]):
                output = tuple(np.broadcast_shapes(*shapes))
                cases.append(Case(op, shapes, [_scale(rng), _scale(rng)], [_zero(rng, dtype), _zero(rng, dtype)],
                                  output, _scale(rng), _zero(rng, dtype), np.dtype(dtype)))
    return cases


def _tie_pools() -> list[Case]:
    """Pools whose exact means sit on half steps: one per MLAS kernel (global, vector, generic) and scale."""
    cases = []
    for scale in (0.1, 0.3, 0.07, 0.0123):
        cases.append(Case("QLinearGlobalAveragePool", [(1, 16, 8, 8)], [scale], [3], (1, 16, 1, 1), scale, -1))
        cases.append(Case("QLinearAveragePool", [(1, 16, 8, 8)], [scale], [3], (1, 16, 2, 4), scale, -1,
                          attrs={"kernel_shape": [4, 2], "strides": [4, 2]}))  # vector: width stride <= 2
        cases.append(Case("QLinearAveragePool", [(1, 16, 8, 8)], [scale], [3], (1, 16, 4, 2), scale, -1,
                          attrs={"kernel_shape": [2, 4], "strides": [2, 4]}))  # generic: width stride 4
    return cases


def _pool_cases(rng: np.random.Generator) -> list[Case]:
    cases = _tie_pools()
    for dtype in (np.int8, np.uint8):
        z = _zero(rng, dtype)
        cases += [
            Case("QLinearGlobalAveragePool", [(1, 8, 7, 7)], [_scale(rng)], [z], (1, 8, 1, 1), _scale(rng), z, np.dtype(dtype)),
            Case("QLinearAveragePool", [(1, 8, 25, 5)], [_scale(rng)], [z], (1, 8, 1, 1), _scale(rng), z, np.dtype(dtype),
                 attrs={"kernel_shape": [25, 5], "strides": [25, 5]}),  # DS-CNN's pool: not MLAS's global path
            Case("QLinearAveragePool", [(1, 8, 9, 9)], [_scale(rng)], [z], (1, 8, 9, 9), _scale(rng), z, np.dtype(dtype),
                 attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 0}),
            Case("QLinearAveragePool", [(1, 8, 9, 9)], [_scale(rng)], [z], (1, 8, 5, 5), _scale(rng), z, np.dtype(dtype),
                 attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
            Case("QLinearAveragePool", [(1, 8, 20)], [_scale(rng)], [z], (1, 8, 10), _scale(rng), z, np.dtype(dtype),
                 attrs={"kernel_shape": [2], "strides": [2]}),  # 1-D: generic
        ]
    return cases


def _clamped_cases() -> list[Case]:
    """A fused Relu (output_min = zero point) and a Relu6-like clip on each op."""
    return [
        Case("QLinearAdd", [(1, 4, 6, 6), (1, 4, 6, 6)], [0.05, 0.08], [3, -2], (1, 4, 6, 6), 0.07, -5, clamp=(-5, 127)),
        Case("QLinearMul", [(1, 4, 6, 6), (1, 4, 6, 6)], [0.05, 0.08], [3, -2], (1, 4, 6, 6), 0.01, 4, clamp=(4, 64)),
        Case("QLinearAveragePool", [(1, 8, 8, 8)], [0.05], [0], (1, 8, 4, 4), 0.02, -10, clamp=(-10, 20),
             attrs={"kernel_shape": [2, 2], "strides": [2, 2]}),
        Case("QLinearGlobalAveragePool", [(1, 8, 8, 8)], [0.05], [0], (1, 8, 1, 1), 0.001, 0, clamp=(0, 50)),
        Case("QLinearSoftmax", [(4, 10)], [0.2], [0], (4, 10), 1 / 256, -128, clamp=(-100, 100)),
    ]


def test_add_and_mul_equal_onnx_runtime(tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    cases = _binary_cases(np.random.default_rng(11))
    wrong, total, report = compare(cases, tmp_path, generic_c_host, runtime_cache, rounds=20)
    assert all(layer["requantization"]["arithmetic"] == "float32" for layer in report["layers"])
    assert wrong == [0] * len(cases), list(zip([c.op for c in cases], wrong, total))


def test_average_pools_equal_onnx_runtime_in_mlas_summation_order(tmp_path: Path, generic_c_host: PluginHost,
                                                                  runtime_cache: Path) -> None:
    cases = _pool_cases(np.random.default_rng(12))
    wrong, total, report = compare(cases, tmp_path, generic_c_host, runtime_cache, rounds=30)
    paths = [layer["requantization"]["summation"] for layer in report["layers"]]
    assert {"global", "vector", "generic"} <= set(paths)
    assert wrong == [0] * len(cases), list(zip(paths, wrong, total))


@pytest.mark.parametrize("forced", ["generic", "vector"])
def test_another_summation_order_is_caught(forced: str, tmp_path: Path, generic_c_host: PluginHost,
                                           runtime_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tie cases tell the orders apart: forcing the other window kernel gives mismatches."""
    monkeypatch.setattr(qlinear_float32, "mlas_pool_path", lambda *args: forced)
    cases = [case for case in _tie_pools() if case.op == "QLinearAveragePool"]
    wrong, _, _ = compare(cases, tmp_path, generic_c_host, runtime_cache, rounds=10)
    right_order = ["vector" if case.attrs["strides"][-1] <= 2 else "generic" for case in cases]
    assert all((count > 0) == (order != forced) for count, order in zip(wrong, right_order)), wrong


def test_softmax_flip_rate_against_onnx_runtime(tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    """MLAS's exp is an approximation of its own: measured 0 flips in 3.07 million outputs on this seed (AVX2/FMA3)."""
    rng = np.random.default_rng(7)
    cases = [Case("QLinearSoftmax", [(16, n)], [scale], [int(rng.integers(-20, 20))], (16, n), 1 / 256, -128)
             for n in (10, 12, 37, 128, 1000) for scale in (0.02, 0.0625, 0.11, 0.4)]
    cases += [Case("QLinearSoftmax", [(4, 12, 7)], [0.1], [0], (4, 12, 7), 1 / 256, -128, attrs={"axis": 1}),
              Case("QLinearSoftmax", [(4, 12)], [0.1], [0], (4, 12), 1 / 256, 0, np.dtype(np.uint8)),
              Case("QLinearSoftmax", [(4, 12)], [0.1], [0], (4, 12), 0.003, -128)]
    wrong, total, _ = compare(cases, tmp_path, generic_c_host, runtime_cache, rounds=40, seed=3)
    rate = sum(wrong) / sum(total)
    print(f"QLinearSoftmax float32: {sum(wrong)} of {sum(total)} outputs differ from ONNX Runtime ({rate:.2e})")
    assert sum(total) > 3_000_000 and sum(wrong) == 0, wrong


def test_output_clamps_equal_a_fused_activation(tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    cases = _clamped_cases()
    wrong, total, report = compare(cases, tmp_path, generic_c_host, runtime_cache, rounds=20)
    assert [layer["requantization"]["range"] for layer in report["layers"]] == [list(c.clamp) for c in cases]
    assert wrong == [0] * len(cases), wrong
