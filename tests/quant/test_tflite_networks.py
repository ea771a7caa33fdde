"""Keras networks quantised by TFLiteConverter to full int8 and converted by tf2onnx compile to integer code that
is bit-exact with ONNX Runtime (exact mode) and with LiteRT on the ``.tflite`` (fixed-point mode).

Issue 30's "Done when" for the four MLPerf Tiny networks (``heavy_model``:
about a minute each), and the same checks on two small networks that cover
the same TFLite int8 ops in seconds.  Each file is converted as a user would
(``tf2onnx --tflite``, with and without ``--dequantize``), keeps its dynamic
batch, and is compiled with no flags: exact mode is the default.  Twenty
seeded inputs over the whole int8 range each; no float layer may remain.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.models.keras_mlperf import MLPERF_TINY, NETWORKS, SMALL
from deeploy_core.testing.quant_checks import float_layers, litert_reference, ort_reference, random_samples, worst_steps
from deeploy_core.testing.tflite_export import ConvertedNetwork, converted
from deeploy_core.validate import Toolchain, build_executable
from tests.quant.extra import LITERT, needs

pytestmark = [pytest.mark.quant, needs(*LITERT)]
PLATFORMS = ("generic-c", "pulp-cluster")
CLUSTER_CASES = ("dscnn", "mobilenet_v2_035")
"""Issue 32's Keras networks for the cluster: DS-CNN (64 filters, 49 x 10) and MobileNetV2-0.35 at 96 x 96."""
CASES = [pytest.param(name, marks=[pytest.mark.heavy_model] if NETWORKS[name].heavy else [], id=name)
         for name in (*SMALL, *MLPERF_TINY, "mobilenet_v2_035")]


def _built(model: Path, options: CompileOptions, host: PluginHost, folder: Path, runtime_cache: Path):  # noqa: ANN202
    _, generated = compile_model(model, options, host)
    return generated, build_executable(generated, folder, Toolchain.from_environment(), runtime_cache)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("name", CASES)
def test_int8_tflite_through_tf2onnx_is_integer_and_bit_exact_with_onnx_runtime(
    name: str, platform: str, tmp_path: Path, quant_host: PluginHost, quant_runtime_cache: Path
) -> None:
    files: ConvertedNetwork = converted(name)
    generated, executable = _built(files.int8_onnx, CompileOptions(platform=platform), quant_host, tmp_path,
                                   quant_runtime_cache)
    assert float_layers(generated.report) == []
    worst = worst_steps(generated, executable, random_samples(generated), ort_reference(files.int8_onnx))
    assert set(worst.values()) == {0.0}, worst


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("name", CASES)
def test_int8_tflite_in_fixed_point_is_bit_exact_with_litert(
    name: str, platform: str, tmp_path: Path, quant_host: PluginHost, quant_runtime_cache: Path
) -> None:
    files = converted(name)
    generated, executable = _built(files.int8_onnx, CompileOptions(platform=platform, quantization="fixed-point"),
                                   quant_host, tmp_path, quant_runtime_cache)
    assert float_layers(generated.report) == []
    worst = worst_steps(generated, executable, random_samples(generated), litert_reference(files.int8_tflite,
                                                                                           generated))
    assert set(worst.values()) == {0.0}, worst


@pytest.mark.parametrize("name", CASES)
def test_dequantize_conversion_compiles_and_matches_onnx_runtime(
    name: str, tmp_path: Path, quant_host: PluginHost, quant_runtime_cache: Path
) -> None:
    """``--dequantize`` keeps float weights and casts the int8 input and output: the float network's accuracy.

    The int8 output is a float value cast (truncated) to int8, so a float
    rounding difference next to a whole number can move it by one; more is a
    wrong answer.
    """
    files = converted(name)
    for platform in PLATFORMS:
        generated, executable = _built(files.int8_dequantize_onnx, CompileOptions(platform=platform), quant_host,
                                       tmp_path / platform, quant_runtime_cache)
        worst = worst_steps(generated, executable, random_samples(generated, count=5),
                            ort_reference(files.int8_dequantize_onnx))
        assert max(worst.values()) <= 1, (platform, worst)


@pytest.mark.heavy_model(reason="exports and tiles a Keras network")
@pytest.mark.parametrize("name", CLUSTER_CASES)
def test_float_keras_network_validates_on_the_cluster_with_its_defaults(
    name: str, quant_host: PluginHost, quant_runtime_cache: Path
) -> None:
    """The float file (``tf2onnx --tflite float.tflite``), batch 1 by the dynamic-batch notice, tiled into the
    cluster's default L1 (its Pad layers tiled as windows) and compared with ONNX Runtime."""
    files = converted(name)
    generated, result = validate_model(files.float_onnx, CompileOptions(platform="pulp-cluster"), quant_host,
                                       atol=1e-4, rtol=1e-4, repeats=1, cache_dir=quant_runtime_cache)
    assert result.comparisons and all(c.ok for c in result.comparisons), [
        (c.name, c.max_abs_error) for c in result.comparisons]
    level = generated.report["memory_levels"]["L1"]
    assert level["used"] <= level["capacity"] == 65536
