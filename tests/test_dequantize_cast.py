"""tf2onnx ``--dequantize`` inputs: ``Cast(int → float) [→ Sub(zp)] → Mul(scale)`` runs as DequantizeLinear (#30).

The network below starts as tf2onnx writes a dequantised TFLite model's int8 input (a Cast to float32, the Sub of
the zero point, the Mul by the scale) and continues in float (Transpose, Conv, Relu, Gemm).  It compiles on
generic-c and pulp-cluster, its C runs on ONNX Runtime's seeded random int8 input, and matches ONNX Runtime on the
original file (Cast/Sub/Mul as written).  The lowering pass is checked on its own: each rewrite produces exactly
one DequantizeLinear with the constants' values, and chains that are not an exact dequantisation (a fractional or
out-of-range zero point, a negative scale, ``zp - x``, an int32 input, a Cast with another reader) keep their Cast.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.lowering.dequantize_cast import CastToDequantizeLinear
from deeploy_core.plugins import PluginHost

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
pytest.importorskip("deeploy_pulp_cluster", reason="the PULP cluster platform (plugins/pulp_cluster) is not installed")
from deeploy_generic_c import plugin as generic_c_plugin  # noqa: E402
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin  # noqa: E402

NUMPY_TO_ONNX = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int16: TensorProto.INT16,
                 np.int32: TensorProto.INT32}


def dequantize_chain(dtype: type, zero: float | None, scale: float, *, swapped_sub: bool = False,
                     scale_first: bool = False) -> list[onnx.NodeProto]:
    """tf2onnx's dequantisation of input ``x`` into float tensor ``d``."""
    nodes = [helper.make_node("Cast", ["x"], ["x_cast"], name="x_dequant_Cast", to=TensorProto.FLOAT)]
    before = "x_cast"
    if zero is not None:
        zp = numpy_helper.from_array(np.array(zero, np.float32))
        nodes.append(helper.make_node("Constant", [], ["zp"], value=zp))
        nodes.append(helper.make_node("Sub", ["zp", "x_cast"] if swapped_sub else ["x_cast", "zp"], ["x_sub"],
                                      name="x_dequant_Sub"))
        before = "x_sub"
    nodes.append(helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(np.array(scale, np.float32))))
    nodes.append(helper.make_node("Mul", ["s", before] if scale_first else [before, "s"], ["d"], name="x_dequant_Mul"))
    return nodes


def network(path: Path, dtype: type = np.int8, zero: float | None = -1.0, scale: float = 0.0078431,
            **chain: bool) -> Path:
    """int8 NHWC 1x6x6x3 input → dequantise → Transpose → Conv 3x3 → Relu → Flatten → Gemm (float32 out)."""
    rng = np.random.default_rng(30)
    weights = [numpy_helper.from_array((rng.standard_normal((4, 3, 3, 3)) * 0.4).astype(np.float32), "w"),
               numpy_helper.from_array((rng.standard_normal(4) * 0.1).astype(np.float32), "b"),
               numpy_helper.from_array((rng.standard_normal((64, 5)) * 0.2).astype(np.float32), "fc")]
    nodes = [*dequantize_chain(dtype, zero, scale, **chain),
             helper.make_node("Transpose", ["d"], ["nchw"], perm=[0, 3, 1, 2], name="to_nchw"),
             helper.make_node("Conv", ["nchw", "w", "b"], ["c"], kernel_shape=[3, 3], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "fc"], ["y"], name="fc")]
    graph = helper.make_graph(nodes, "tf2onnx",
                              [helper.make_tensor_value_info("x", NUMPY_TO_ONNX[dtype], [1, 6, 6, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


@pytest.fixture(scope="module")
def host() -> PluginHost:
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


@pytest.mark.parametrize("platform", ["generic-c", "pulp-cluster"])
@pytest.mark.parametrize(("dtype", "zero", "chain"), [
    (np.int8, -1.0, {}),                    # tf2onnx's int8 input: zp -1, scale 1/127.5
    (np.uint8, 128.0, {"scale_first": True}),
    (np.int8, None, {}),                   # symmetric: no Sub
], ids=["int8", "uint8-scale-first", "int8-no-sub"])
def test_dequantised_input_validates_against_onnx_runtime(tmp_path: Path, host: PluginHost, platform: str,
                                                          dtype: type, zero: float | None, chain: dict) -> None:
    path = network(tmp_path / "m.onnx", dtype, zero, **chain)
    generated, result = validate_model(path, CompileOptions(platform=platform), host, repeats=1)
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    ops = [layer["op"] for layer in generated.report["layers"]]
    assert ops[0] == "DequantizeLinear" and not {"Cast", "Sub", "Mul"} & set(ops), ops
    assert generated.inputs[0].dtype == np.dtype(dtype).name


def _lowered(path: Path) -> list[gs.Node]:
    graph = gs.import_onnx(onnx.shape_inference.infer_shapes(onnx.load(path)))
    graph.fold_constants().cleanup().toposort()
    CastToDequantizeLinear().apply_pass(graph, {})
    return list(graph.nodes)


def test_the_rewrite_keeps_the_constants(tmp_path: Path) -> None:
    nodes = _lowered(network(tmp_path / "m.onnx", np.int16, 300.0, 0.25))
    dequantize = nodes[0]
    assert [node.op for node in nodes][:2] == ["DequantizeLinear", "Transpose"]
    assert dequantize.inputs[0].name == "x" and dequantize.outputs[0].name == "d"
    scale, zero = (np.asarray(tensor.values) for tensor in dequantize.inputs[1:])
    assert scale.dtype == np.float32 and scale.shape == () and scale == np.float32(0.25)
    assert zero.dtype == np.int16 and zero.shape == () and zero == 300


@pytest.mark.parametrize(("dtype", "zero", "scale", "chain"), [
    (np.int8, 0.5, 0.1, {}),              # fractional zero point
    (np.int8, 200.0, 0.1, {}),            # outside int8
    (np.uint8, -1.0, 0.1, {}),            # outside uint8
    (np.int8, -1.0, -0.1, {}),            # negative scale
    (np.int8, -1.0, 0.0, {}),             # zero scale
    (np.int8, -1.0, float("inf"), {}),    # infinite scale
    (np.int8, -1.0, 0.1, {"swapped_sub": True}),  # zp - x
    (np.int32, -1.0, 0.1, {}),            # int32 is not exact in float32
], ids=["fractional-zp", "zp-out-of-int8", "zp-out-of-uint8", "negative-scale", "zero-scale", "inf-scale",
        "zp-minus-x", "int32"])
def test_other_chains_keep_their_cast(tmp_path: Path, dtype: type, zero: float, scale: float, chain: dict) -> None:
    ops = [node.op for node in _lowered(network(tmp_path / "m.onnx", dtype, zero, scale, **chain))]
    assert "Cast" in ops and "DequantizeLinear" not in ops, ops


def test_a_cast_read_twice_stays(tmp_path: Path) -> None:
    path = network(tmp_path / "m.onnx")
    model = onnx.load(path)
    model.graph.node.append(helper.make_node("Relu", ["x_cast"], ["z"], name="other_reader"))
    model.graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 6, 6, 3]))
    onnx.save(model, path)
    ops = [node.op for node in _lowered(path)]
    assert "Cast" in ops and "DequantizeLinear" not in ops, ops
