"""Exact mode's float32 QLinear kernels on the cluster, tiled into a small L1, still equal ONNX Runtime.

The cluster reuses the generic C plugin's kernels (ops/elementwise/qlinear_float32.py,
ops/pooling/qlinear_float32.py, ops/softmax/qlinear_float32.py) and tiles them
through deeploy_core/tiling/constraints.py:
Add/Mul element-wise, the pools as sliding windows whose tiles still sum in
the order MLAS chose for the whole layer (a one-output tile of a 3x3 pool
covers its whole tile input, yet ONNX Runtime ran the vector kernel, not the
global one), softmax in whole rows.  Every case is split into several tiles;
the reference is ONNX Runtime on the unfused float graph (0 LSB).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from deeploy_core.api import CompileOptions
from deeploy_core.plugins import PluginHost
from plugins.generic_c.tests.qlinear_exact_cases import Case, compare

L1_BYTES = 4096
TILED_CASES = [
    Case("QLinearAdd", [(1, 16, 24, 24), (1, 16, 24, 24)], [0.05, 0.1], [3, -7], (1, 16, 24, 24), 0.12, -2,
         clamp=(-2, 127)),
    Case("QLinearMul", [(1, 16, 24, 24), (1, 16, 1, 1)], [0.05, 0.4], [3, 0], (1, 16, 24, 24), 0.01, 0),
    Case("QLinearAveragePool", [(1, 8, 24, 24)], [0.1], [3], (1, 8, 12, 12), 0.1, -1,
         attrs={"kernel_shape": [2, 2], "strides": [2, 2]}),  # exact ties: the summation order shows
    Case("QLinearAveragePool", [(1, 8, 30, 30)], [0.0675], [-13], (1, 8, 28, 28), 0.0675, -13,
         attrs={"kernel_shape": [3, 3]}),  # stride 1: one-output tiles look global
    Case("QLinearAveragePool", [(1, 8, 33, 33)], [0.07], [5], (1, 8, 17, 17), 0.05, 0,
         attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 0}),
    Case("QLinearGlobalAveragePool", [(1, 32, 12, 12)], [0.05], [-3], (1, 32, 1, 1), 0.05, -3),
    Case("QLinearSoftmax", [(96, 37)], [0.0376], [-5], (96, 37), 1 / 256, -128, attrs={"axis": -1}),
    Case("QLinearSoftmax", [(4, 37, 16)], [0.5], [0], (4, 37, 16), 1 / 256, -128, attrs={"axis": 1}),
]


def test_tiled_float32_kernels_equal_onnx_runtime(cluster_host: PluginHost, runtime_cache: Path,
                                                  tmp_path: Path) -> None:
    options = CompileOptions(platform="pulp-cluster", level_sizes={"L1": L1_BYTES})
    wrong, total, report = compare(TILED_CASES, tmp_path, cluster_host, runtime_cache, rounds=6, options=options)
    tiles = {layer["layer"]: layer["tiles"] for layer in report["tiling"]["layers"]}
    assert all(tiles.get(f"case{index}", 0) > 1 for index in range(len(TILED_CASES))), tiles
    assert wrong == [0] * len(TILED_CASES), list(zip([c.op for c in TILED_CASES], wrong, total))
    assert np.sum(total) > 0
