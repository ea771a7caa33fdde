"""Fixed-point mode on the cluster: a SqueezeNet-shaped network tiled over its memories matches ONNX Runtime as on generic-c.

The cluster runs the generic C plugin's integer kernels, so its fixed-point
convolutions round as ONNX Runtime's float32 requantisation does (see the
generic C plugin's test_fixed_point_fire.py, which covers every quantisation
variant); this checks the tiled build on the variant that used to be three
steps off at the output (per-tensor int8).
"""

from __future__ import annotations

from pathlib import Path

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.lsb_errors import worst_lsb_errors
from deeploy_core.testing.models.fire import image_inputs, quantised_fire_network
from deeploy_core.validate import Toolchain, build_executable


def test_tiled_fire_network_fixed_point_is_bit_exact_per_fire_module_and_within_one_lsb_at_the_output(
    tmp_path: Path, cluster_host: PluginHost, runtime_cache: Path
) -> None:
    model = quantised_fire_network(tmp_path, per_channel=False, activations="int8")
    _, generated = compile_model(model, CompileOptions(platform="pulp-cluster", quantization="fixed-point"), cluster_host)
    assert generated.report["tiling"]["layers"], "the cluster build must be tiled"
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    worst = worst_lsb_errors(generated, executable, model, (image_inputs(1000 + seed) for seed in range(30)))
    fires = {name: error for name, error in worst.items() if name.startswith("fire")}
    assert len(fires) == 6 and not any(fires.values()), worst
    assert worst["y"] <= 1, worst
