"""Exact mode's float-bias Conv/Gemm kernels on the cluster, tiled into a small L1, still follow ONNX Runtime.

The cluster reuses the generic C plugin's kernels; a tile's node carries its
slice of the float bias, and the kernel's per-channel tables (accumulator
scale, the product's clamp) are built from that slice.  The network is the
generic C test's (ONNX Runtime's QDQ file with its biases made float), per
channel, with an L1 small enough to split both convolutions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_core.validate.reference import run_reference
from plugins.generic_c.tests.float_bias_network import float_bias_file, output_step

L1_BYTES = 1024


def test_tiled_float_bias_convolutions_follow_onnx_runtime(cluster_host: PluginHost, runtime_cache: Path,
                                                           tmp_path: Path) -> None:
    model = float_bias_file(tmp_path, per_channel=True)
    options = CompileOptions(platform="pulp-cluster", level_sizes={"L1": L1_BYTES})
    _, generated = compile_model(model, options, cluster_host)
    tiles = {layer["layer"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    convolutions = [layer["node"] for layer in generated.report["layers"] if layer["op"] == "QLinearConv"]
    assert len(convolutions) == 2 and all(tiles.get(name, 0) > 1 for name in convolutions), tiles
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    rng = np.random.default_rng(5)
    step = output_step(model)
    for _ in range(10):
        x = rng.standard_normal((1, 3, 10, 10)).astype(np.float32)
        got = run_network(executable, generated, {"x": x}, repeats=1)[0][0]
        want = run_reference(model, {"x": x})[0]
        assert float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / step < 1e-4
