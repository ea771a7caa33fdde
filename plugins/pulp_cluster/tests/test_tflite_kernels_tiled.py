"""Fixed-point mode's TFLite kernels on the cluster, tiled into a small L1, equal TFLite's arithmetic.

The cluster reuses the generic C plugin's kernels (ops/elementwise/qlinear_tflite.py,
ops/pooling/qlinear_tflite.py, ops/softmax/qlinear_tflite.py) and tiles them through deeploy_core/tiling/constraints.py: Add/Mul elementwise,
the pools as sliding windows (a tile's border must still count only the
pixels inside the input, as TFLite does, and padding only where the input
really ends), softmax in whole rows.  Each case is large enough to be split
into several tiles; each output must equal the numpy model of TFLite's kernel
(tflite_cases.py, held to LiteRT by the generic C plugin's tests) element for
element.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from deeploy_core.api import CompileOptions
from deeploy_core.plugins import PluginHost
from plugins.generic_c.tests.tflite_cases import Case, run_cases

L1_BYTES = 4096
U8 = np.dtype(np.uint8)
TILED_CASES = [
    Case("QLinearAdd", [(1, 16, 24, 24), (1, 16, 24, 24)], [0.05, 0.1], [3, -7], (1, 16, 24, 24), 0.12, -2,
         clamp=(-2, 127)),
    Case("QLinearMul", [(1, 16, 24, 24), (1, 16, 1, 1)], [0.05, 0.4], [3, 0], (1, 16, 24, 24), 0.01, 0),
    Case("QLinearAveragePool", [(1, 8, 33, 33)], [0.0675], [-13], (1, 8, 17, 17), 0.0675, -13,
         attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    Case("QLinearAveragePool", [(1, 8, 24, 24)], [0.04], [100], (1, 8, 12, 12), 0.04, 100, dtype=U8,
         attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, clamp=(100, 255)),
    Case("QLinearGlobalAveragePool", [(1, 32, 12, 12)], [0.05], [-3], (1, 32, 1, 1), 0.02, -3),
    Case("QLinearGlobalAveragePool", [(1, 12, 12, 32)], [0.05], [-3], (1, 1, 1, 32), 0.02, 7,
         attrs={"channels_last": 1}),
    Case("QLinearSoftmax", [(96, 37)], [0.0376], [-5], (96, 37), 1 / 256, -128, attrs={"axis": -1, "opset": 13}),
    Case("QLinearSoftmax", [(4, 37, 16)], [0.5], [0], (4, 37, 16), 1 / 256, -128, attrs={"axis": 1, "opset": 13}),
]


def test_tiled_tflite_kernels_equal_tflite_arithmetic(cluster_host: PluginHost, runtime_cache: Path,
                                                      tmp_path: Path) -> None:
    options = CompileOptions(platform="pulp-cluster", quantization="fixed-point", level_sizes={"L1": L1_BYTES})
    wrong, report = run_cases(TILED_CASES, tmp_path, cluster_host, runtime_cache, rounds=6, options=options)
    tiles = {layer["layer"]: layer["tiles"] for layer in report["tiling"]["layers"]}
    assert all(tiles.get(f"case{index}", 0) > 1 for index in range(len(TILED_CASES))), str(tiles)
    assert wrong == [0] * len(TILED_CASES)
