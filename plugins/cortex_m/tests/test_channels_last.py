"""The channels-last lowering on small graphs: results equal ONNX Runtime's before and after, transposes cancelled.

ONNX Runtime cannot run the ``Cmsis*`` nodes, so each is expanded back into
``Transpose -> original op -> Transpose`` with its weights transposed back
(:func:`_as_onnx`): the check then covers everything the pass does to the
graph (layouts, weight permutations, cancelled and pushed transposes), while
the CMSIS-NN kernels' own arithmetic is checked on QEMU (test_cmsis_conv_qemu.py).
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest

from deeploy_cortex_m.layout import CancelTransposes, ChannelsLastLayers
from deeploy_cortex_m.layout.layers import AVERAGE_POOL, CONV, DEPTHWISE, MAX_POOL

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(0)
ORIGINAL = {CONV: ("QLinearConv", ""), DEPTHWISE: ("QLinearConv", ""), AVERAGE_POOL: ("QLinearAveragePool",
                                                                                   "com.microsoft"),
            MAX_POOL: ("MaxPool", "")}
NOT_ONNX = ("requantization", "output_min", "output_max")


def _c(name: str, values: np.ndarray) -> gs.Constant:
    return gs.Constant(name, np.asarray(values))


def _v(name: str, shape: list[int], dtype: type = np.int8) -> gs.Variable:
    return gs.Variable(name, dtype=dtype, shape=shape)


def _qparams(name: str, scale: float, zero: int) -> list[gs.Constant]:
    return [_c(f"{name}_s", np.array(scale, np.float32)), _c(f"{name}_z", np.array(zero, np.int8))]


def _conv(x: gs.Variable, y: gs.Variable, m: int, c: int, k: int, group: int = 1, pads: int = 1,
          stride: int = 1) -> gs.Node:
    name = y.name
    weights = _c(f"{name}_w", RNG.integers(-127, 128, (m, c // group, k, k)).astype(np.int8))
    w_scale = _c(f"{name}_ws", RNG.uniform(0.002, 0.01, m).astype(np.float32))
    w_zero = _c(f"{name}_wz", np.zeros(m, np.int8))
    bias = _c(f"{name}_b", RNG.integers(-500, 500, m).astype(np.int32))
    return gs.Node("QLinearConv", name=name, inputs=[x, *_qparams(f"{name}_x", 0.05, 3), weights, w_scale, w_zero,
                                                     *_qparams(f"{name}_y", 0.1, -5), bias], outputs=[y],
                   attrs={"group": group, "pads": [pads] * 4, "strides": [stride, stride], "kernel_shape": [k, k],
                          "requantization": "tflite", "output_min": -5})


def _residual_graph() -> gs.Graph:
    """Conv -> depthwise Conv -> QLinearAdd(residual) -> {average pool, max pool}, NCHW in and out."""
    x, y1, y2, y3 = _v("x", [1, 3, 6, 6]), _v("y1", [1, 4, 6, 6]), _v("y2", [1, 4, 6, 6]), _v("y3", [1, 4, 6, 6])
    y4, y5 = _v("y4", [1, 4, 3, 3]), _v("y5", [1, 4, 3, 3])
    add = gs.Node("QLinearAdd", domain="com.microsoft", inputs=[y1, *_qparams("a", 0.1, -5), y2,
                                                                 *_qparams("b", 0.1, -5), *_qparams("o", 0.2, 0)],
                  outputs=[y3], attrs={"requantization": "tflite"})
    pool = gs.Node("QLinearAveragePool", domain="com.microsoft", inputs=[y3, *_qparams("p", 0.2, 0),
                                                                          *_qparams("q", 0.2, 0)], outputs=[y4],
                   attrs={"kernel_shape": [2, 2], "strides": [2, 2], "requantization": "tflite"})
    maxpool = gs.Node("MaxPool", inputs=[y3], outputs=[y5], attrs={"kernel_shape": [3, 3], "strides": [2, 2],
                                                                   "pads": [1, 1, 1, 1]})
    nodes = [_conv(x, y1, 4, 3, 3), _conv(y1, y2, 4, 4, 3, group=4), add, pool, maxpool]
    return gs.Graph(nodes=nodes, inputs=[x], outputs=[y4, y5], opset=14)


def _as_onnx(graph: gs.Graph) -> onnx.ModelProto:
    """``graph`` with every Cmsis* node expanded back into transposes around its ONNX op (see the docstring)."""
    graph = graph.copy()
    for node in list(graph.nodes):
        for key in NOT_ONNX:
            node.attrs.pop(key, None)
        if node.op not in ORIGINAL:
            continue
        op, domain = ORIGINAL[node.op]
        x, y = node.inputs[0], node.outputs[0]
        n, h, w, c = x.shape
        x_nchw, y_nchw = _v(f"{x.name}_back", [n, c, h, w]), _v(f"{y.name}_back", [y.shape[i] for i in (0, 3, 1, 2)])
        inputs = [x_nchw, *node.inputs[1:]]
        if node.op in (CONV, DEPTHWISE):
            perm = (0, 3, 1, 2) if node.op == CONV else (3, 0, 1, 2)
            inputs[3] = _c(f"{node.inputs[3].name}_back", np.transpose(node.inputs[3].values, perm))
        graph.nodes += [gs.Node("Transpose", inputs=[x], outputs=[x_nchw], attrs={"perm": [0, 3, 1, 2]}),
                        gs.Node(op, domain=domain, inputs=inputs, outputs=[y_nchw], attrs=dict(node.attrs)),
                        gs.Node("Transpose", inputs=[y_nchw], outputs=[y], attrs={"perm": [0, 2, 3, 1]})]
        node.outputs.clear()
    graph.cleanup().toposort()
    model = gs.export_onnx(graph)
    model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return model


def _run(graph: gs.Graph, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(_as_onnx(graph).SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, feeds))


def _lowered(graph: gs.Graph) -> gs.Graph:
    graph = graph.copy()
    ChannelsLastLayers().apply_pass(graph, {})
    CancelTransposes().apply_pass(graph, {})
    return graph


def test_residual_chain_runs_channels_last_with_transposes_only_at_the_edges() -> None:
    graph = _residual_graph()
    feeds = {"x": RNG.integers(-128, 128, (1, 3, 6, 6)).astype(np.int8)}
    before = _run(graph, feeds)
    lowered = _lowered(graph)
    ops = [node.op for node in lowered.nodes]
    assert sorted(ops) == sorted([CONV, DEPTHWISE, "QLinearAdd", AVERAGE_POOL, MAX_POOL, "Transpose", "Transpose",
                                  "Transpose"]), ops
    first = [node for node in lowered.nodes if node.op == "Transpose" and node.inputs[0].name == "x"]
    assert len(first) == 1, "the one transpose in front is the graph input's, to NHWC"
    assert [t.name for t in lowered.outputs] == ["y4", "y5"]
    after = _run(lowered, feeds)
    for want, have in zip(before, after):
        np.testing.assert_array_equal(want, have)


def test_size_one_transposes_become_reshapes_and_cancel() -> None:
    """tf2onnx's C=1 input: NHWC [1,5,4,1] -> Reshape [1,1,5,4] -> conv: the conv reads the graph input itself."""
    x, r, y, out = _v("x", [1, 5, 4, 1]), _v("r", [1, 1, 5, 4]), _v("y", [1, 2, 5, 4]), _v("out", [1, 5, 4, 2])
    nodes = [gs.Node("Reshape", inputs=[x, _c("shape", np.array([1, 1, 5, 4], np.int64))], outputs=[r]),
             _conv(r, y, 2, 1, 3), gs.Node("Transpose", inputs=[y], outputs=[out], attrs={"perm": [0, 2, 3, 1]})]
    graph = gs.Graph(nodes=nodes, inputs=[x], outputs=[out], opset=14)
    feeds = {"x": RNG.integers(-128, 128, (1, 5, 4, 1)).astype(np.int8)}
    before = _run(graph, feeds)
    lowered = _lowered(graph)
    assert [node.op for node in lowered.nodes] == [CONV]
    assert lowered.nodes[0].inputs[0].name == "x" and lowered.nodes[0].outputs[0].name == "out"
    np.testing.assert_array_equal(before[0], _run(lowered, feeds)[0])


def test_relu_between_layers_is_pushed_and_unqualified_layers_are_left_alone() -> None:
    """Relu between two convs stays NHWC; an asymmetric-weight conv keeps ONNX's layout (generic C runs it)."""
    x, a, b, c, d = (_v(n, [1, 4, 5, 5]) for n in "xabcd")
    odd = _conv(c, d, 4, 4, 3)
    odd.inputs[5] = _c("odd_wz", np.full(4, 2, np.int8))
    nodes = [_conv(x, a, 4, 4, 3), gs.Node("Relu", inputs=[a], outputs=[b]), _conv(b, c, 4, 4, 1, pads=0), odd]
    graph = gs.Graph(nodes=nodes, inputs=[x], outputs=[d], opset=14)
    feeds = {"x": RNG.integers(-128, 128, (1, 4, 5, 5)).astype(np.int8)}
    before = _run(graph, feeds)
    lowered = _lowered(graph)
    assert [node.op for node in lowered.nodes] == ["Transpose", CONV, "Relu", CONV, "Transpose", "QLinearConv"]
    np.testing.assert_array_equal(before[0], _run(lowered, feeds)[0])


def test_identity_transpose_pair_before_a_graph_output_keeps_the_output_name() -> None:
    x, t, y = _v("x", [1, 2, 3, 4]), _v("t", [1, 3, 4, 2]), _v("y", [1, 2, 3, 4])
    relu_out = _v("r", [1, 2, 3, 4])
    nodes = [gs.Node("Relu", inputs=[x], outputs=[relu_out]),
             gs.Node("Transpose", inputs=[relu_out], outputs=[t], attrs={"perm": [0, 2, 3, 1]}),
             gs.Node("Transpose", inputs=[t], outputs=[y], attrs={"perm": [0, 3, 1, 2]})]
    graph = gs.Graph(nodes=nodes, inputs=[x], outputs=[y], opset=14)
    CancelTransposes().apply_pass(graph, {})
    assert [node.op for node in graph.nodes] == ["Relu"] and graph.nodes[0].outputs[0].name == "y"
