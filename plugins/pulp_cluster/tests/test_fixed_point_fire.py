"""Fixed-point mode on the cluster: a SqueezeNet-shaped network tiled over its memories computes, bit for bit,
what the untiled generic C build computes.

The cluster runs the generic C plugin's integer kernels, so its fixed-point
layers compute TFLite's arithmetic (see the generic C plugin's
test_fixed_point_fire.py for how each layer relates to ONNX Runtime).  Tiling
cuts a layer into tiles, moves them between memories and splits rows over
cores; none of that may change a single output value.  So the tiled build is
held to the untiled one exactly, every fire module and the classes, over 30
inputs: any difference is a tiling bug, whatever the arithmetic.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.models.fire import image_inputs, quantised_fire_network
from deeploy_core.validate import Toolchain, build_executable, run_network

INPUTS = 30


def test_tiled_fire_network_fixed_point_equals_the_untiled_generic_c_build_bit_for_bit(
    tmp_path: Path, cluster_host: PluginHost, runtime_cache: Path
) -> None:
    model = quantised_fire_network(tmp_path, per_channel=False, activations="int8")
    builds = {}
    for platform in ("generic-c", "pulp-cluster"):
        _, generated = compile_model(model, CompileOptions(platform=platform, quantization="fixed-point"), cluster_host)
        convs = [layer for layer in generated.report["layers"] if layer["op"] == "QLinearConv"]
        assert len(convs) == 20 and all(layer["requantization"]["arithmetic"] == "tflite" for layer in convs), platform
        executable = build_executable(generated, tmp_path / platform, Toolchain.from_environment(), runtime_cache)
        builds[platform] = (generated, executable)
    cluster = builds["pulp-cluster"][0].report
    assert cluster["tiling"]["layers"], "the cluster build must be tiled"
    assert any(layer["tiles"] > 1 for layer in cluster["tiling"]["layers"]), "some layer must be cut into tiles"
    names = [spec.name for spec in builds["generic-c"][0].outputs]
    assert names == [spec.name for spec in builds["pulp-cluster"][0].outputs] and len(names) == 7
    for seed in range(INPUTS):
        sample = image_inputs(1000 + seed)
        untiled, tiled = (run_network(executable, generated, sample, repeats=1)[0]
                          for generated, executable in builds.values())
        for name, expected, actual in zip(names, untiled, tiled):
            assert expected.dtype == actual.dtype and expected.shape == actual.shape, name
            differing = int(np.count_nonzero(expected.view(np.uint8) != actual.view(np.uint8)))
            assert expected.tobytes() == actual.tobytes(), f"seed {seed}, {name}: {differing} bytes differ"
