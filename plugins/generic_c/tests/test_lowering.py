"""Generic C lowering: MatMul + bias Add becomes one Gemm, and the result still matches ONNX Runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.plugins import PluginHost


def matmul_add(tmp_path: Path, bias_shape: tuple[int, ...]) -> Path:
    rng = np.random.default_rng(5)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
            helper.make_node("Add", ["h", "b"], ["y"], name="bias"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])],
        [numpy_helper.from_array(rng.standard_normal((8, 5)).astype(np.float32), "w"),
         numpy_helper.from_array(rng.standard_normal(bias_shape).astype(np.float32), "b")],
    )
    path = tmp_path / "mm.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def test_matmul_add_becomes_gemm(tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    for shape in ((5,), (1, 5), (3, 5), (3, 1)):
        model = matmul_add(tmp_path, shape)
        deployer, generated = compile_model(model, CompileOptions(platform="generic-c"), generic_c_host)
        compilation = deployer.compilation
        assert [layer.op_type for layer in compilation.layers] == ["Gemm"], shape
        assert compilation.lowering_results == {"lowering:generic-c": {"MatMulAddToGemm": 1}} or "MatMulAddToGemm" in str(compilation.lowering_results)
        _, result = validate_model(model, CompileOptions(platform="generic-c"), generic_c_host, atol=1e-5, rtol=1e-5,
                                   cache_dir=runtime_cache)
        assert result.ok, (shape, [c.max_abs_error for c in result.comparisons])
