"""In the core's default ``--quantization exact``, CMSIS-NN stays idle and the compile says why, in one notice.

An int8 TFLite convolution compiled for cortex-m4 without flags keeps ONNX
Runtime's rounding on generic C's kernel, and the report's warnings (which
``compile`` prints as a notice) name the layer count and the option that runs
it on CMSIS-NN; with ``--quantization fixed-point`` the same layer is CMSIS-NN's
and no notice is given.  A float network gets no notice either.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost

QUANT = ("tensorflow", "tf2onnx", "ai_edge_litert")


def _host() -> PluginHost:
    from deeploy_cortex_m import plugin as cortex_m_plugin
    from deeploy_generic_c import plugin as generic_c_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c")
    host.add_plugin(cortex_m_plugin, name="cortex-m")
    return host


def _notices(report: dict[str, object]) -> list[str]:
    warnings = report["warnings"]
    assert isinstance(warnings, list)
    return [str(line) for line in warnings if str(line).startswith("notice: cortex-m4")]


@pytest.mark.skipif(any(importlib.util.find_spec(module) is None for module in QUANT),
                    reason=f"the quant extra ({', '.join(QUANT)}) is not installed: the TFLite model needs it")
def test_exact_mode_names_the_int8_layers_that_fixed_point_runs_on_cmsis_nn() -> None:
    from plugins.cortex_m.tests.cmsis_tflite_cases import layer_models

    model = layer_models() / "conv_relu.onnx"
    _, exact = compile_model(model, CompileOptions(platform="cortex-m4"), _host())
    notices = _notices(exact.report)
    assert len(notices) == 1 and "1 int8 layer(s) (QLinearConv)" in notices[0], exact.report["warnings"]
    assert "--quantization fixed-point" in notices[0]
    assert not any("CMSIS-NN" in str(layer["kernel"]) for layer in exact.report["layers"])

    _, fixed = compile_model(model, CompileOptions(platform="cortex-m4", quantization="fixed-point"), _host())
    assert _notices(fixed.report) == []
    assert [str(layer["kernel"]) for layer in fixed.report["layers"]] == ["CMSIS-NN arm_convolve_wrapper_s8"]


def test_a_float_network_gets_no_notice(tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])])
    path = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    _, generated = compile_model(path, CompileOptions(platform="cortex-m4"), _host())
    assert _notices(generated.report) == []
