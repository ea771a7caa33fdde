"""QOperator files (QLinearConv written in the model) keep issue 29's integer float32 emulation, bit exact with ONNX
Runtime in both modes.

A QLinearConv in the file carries no ``requantization`` attribute, so neither
mode's fused kernels take it: it runs the integer kernel that multiplies the
int32 accumulator by the float32 scale's 24-bit significand and reproduces
float32's three roundings on integers (``dcg_requantize_float32``,
docs/fixed-point.rst proves it equal to ONNX Runtime's QLinearConv given the
same inputs).  A chain of convolutions therefore equals ONNX Runtime at every
layer, with no float arithmetic in the generated code.  Each convolution's
int8 output is also a graph output, so a difference shows where it arises.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_core.validate.reference import run_reference

SHAPE = (1, 8, 12, 12)
LAYERS = 4
INPUTS = 20


def _conv_chain() -> onnx.ModelProto:
    """Four 3x3 convolutions (16 channels) with ReLU, He-initialised from a fixed seed."""
    rng = np.random.default_rng(9)
    nodes, weights, source, channels = [], [], "x", SHAPE[1]
    for index in range(LAYERS):
        std = np.sqrt(2.0 / (channels * 9))
        weights += [numpy_helper.from_array((rng.standard_normal((16, channels, 3, 3)) * std).astype(np.float32),
                                            f"w{index}"),
                    numpy_helper.from_array((rng.standard_normal(16) * 0.1).astype(np.float32), f"b{index}")]
        nodes += [helper.make_node("Conv", [source, f"w{index}", f"b{index}"], [f"c{index}"], kernel_shape=[3, 3],
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{index}"], [f"r{index}"])]
        source, channels = f"r{index}", 16
    graph = helper.make_graph(nodes, "conv_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
                              [helper.make_tensor_value_info(source, TensorProto.FLOAT, [1, 16, *SHAPE[2:]])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _inputs(seed: int) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(seed).standard_normal(SHAPE).astype(np.float32)}


class _Calibration(CalibrationDataReader):
    def __init__(self) -> None:
        self.batches = iter([_inputs(100 + index) for index in range(8)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def _qoperator_model(folder: Path, per_channel: bool, activations: str) -> Path:
    """ONNX Runtime's QOperator quantisation of the chain, every QLinearConv's output also a graph output.

    uint8 activations come with ``reduce_range`` (7-bit weights), as ONNX
    Runtime recommends on x86 CPUs without VNNI, where its uint8 x int8 sums
    saturate in 16 bits otherwise (docs/fixed-point.rst).
    """
    source, target = folder / "chain.onnx", folder / f"chain_{per_channel}_{activations}_qop.onnx"
    onnx.save(_conv_chain(), source)
    quantize_static(str(source), str(target), _Calibration(), quant_format=QuantFormat.QOperator,
                    per_channel=per_channel, weight_type=QuantType.QInt8, reduce_range=activations == "uint8",
                    activation_type=QuantType.QInt8 if activations == "int8" else QuantType.QUInt8)
    model = onnx.load(str(target))
    convs = [node for node in model.graph.node if node.op_type == "QLinearConv"]
    assert len(convs) == LAYERS, [node.op_type for node in model.graph.node]
    element = TensorProto.INT8 if activations == "int8" else TensorProto.UINT8
    model.graph.output.extend(helper.make_tensor_value_info(node.output[0], element, [1, 16, *SHAPE[2:]])
                              for node in convs)
    onnx.save(model, str(target))
    return target


@pytest.mark.parametrize("activations", ["int8", "uint8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
def test_qoperator_convolutions_are_bit_exact_with_onnx_runtime_in_both_modes(
    per_channel: bool, activations: str, tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model = _qoperator_model(tmp_path, per_channel, activations)
    for mode in ("exact", "fixed-point"):
        _, generated = compile_model(model, CompileOptions(platform="generic-c", quantization=mode), generic_c_host)
        convs = [layer for layer in generated.report["layers"] if layer["op"] == "QLinearConv"]
        assert len(convs) == LAYERS and all(layer["requantization"]["rounding"] == "float32" for layer in convs), mode
        assert all(2**23 <= m < 2**24 for layer in convs for m in np.ravel(layer["requantization"]["multiplier"]))
        executable = build_executable(generated, tmp_path / mode, Toolchain.from_environment(), runtime_cache)
        names = [spec.name for spec in generated.outputs]
        for seed in range(INPUTS):
            sample = _inputs(1000 + seed)
            actual, _ = run_network(executable, generated, sample, repeats=1)
            for name, mine, theirs in zip(names, actual, run_reference(model, sample)):
                assert mine.dtype == theirs.dtype, (mode, name)
                assert np.array_equal(mine, theirs), (mode, seed, name, int(np.abs(
                    mine.astype(np.int64) - theirs.astype(np.int64)).max()))
