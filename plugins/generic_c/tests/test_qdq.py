"""Standard QDQ int8 models from ONNX Runtime's quantizer: exact mode is bit-exact with ONNX Runtime.

Exact mode keeps the QDQ structure: DequantizeLinear and QuantizeLinear run
with ONNX Runtime's arithmetic, the ops between them in float32, so the
integer tensors and every output equal the reference (graph optimisations off).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.models import CONFORMANCE_MODELS
from deeploy_core.validate import Toolchain, build_executable, compare_outputs, run_network
from deeploy_core.validate.data import graph_input_specs
from deeploy_core.validate.reference import run_reference


class RandomCalibration(CalibrationDataReader):
    def __init__(self, specs: list, count: int = 8) -> None:
        rng = np.random.default_rng(0)
        self.batches = iter(
            [{name: rng.standard_normal(shape).astype(np.float32) for name, _, shape in specs} for _ in range(count)]
        )

    def get_next(self) -> dict | None:
        return next(self.batches, None)


def quantized(model: onnx.ModelProto, directory: Path, per_channel: bool) -> Path:
    source, target = directory / "float.onnx", directory / "qdq.onnx"
    onnx.save(model, source)
    quantize_static(str(source), str(target), RandomCalibration(graph_input_specs(model)), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=per_channel)
    return target


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("name", sorted(CONFORMANCE_MODELS))
def test_qdq_model_is_bit_exact_with_onnx_runtime_on_20_inputs(
    name: str, per_channel: bool, tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model_path = quantized(CONFORMANCE_MODELS[name](), tmp_path, per_channel)
    ops = {node.op_type for node in onnx.load(model_path).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    _, generated = compile_model(model_path, CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    specs = graph_input_specs(onnx.load(model_path))
    for seed in range(20):
        rng = np.random.default_rng(1000 + seed)
        inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, _, shape in specs}
        actual, _ = run_network(executable, generated, inputs, repeats=1)
        comparisons = compare_outputs(generated, actual, run_reference(model_path, inputs), atol=0.0, rtol=0.0)
        assert all(c.ok for c in comparisons), (seed, [(c.name, c.max_abs_error, c.mismatches) for c in comparisons])
