"""The fuzzing strategies themselves: every drawn graph is valid, ONNX Runtime runs it with the declared shapes,
QDQ graphs have the quantizer's layout, and the strategies reach every op they are meant to cover.

These checks need no plugin and no C compiler; the compiler is fuzzed in the plugins' tests (fast profile) and
by ``bench/fuzz.py`` (long profile).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
from hypothesis import HealthCheck, given, settings

from deeploy_core.testing.fuzz.graphs import FuzzGraph, float_graphs
from deeploy_core.testing.fuzz.qdq import qdq_graphs
from deeploy_core.validate.reference import reference_session

STRATEGY_SETTINGS = settings(max_examples=40, derandomize=True, database=None, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])
QDQ_OPS = {"QuantizeLinear", "DequantizeLinear"}


def run_reference(graph: FuzzGraph) -> list[np.ndarray]:
    return reference_session(graph.model.SerializeToString()).run(None, graph.inputs())


def declared_shapes(model: onnx.ModelProto) -> list[tuple[int, ...]]:
    return [tuple(d.dim_value for d in value.type.tensor_type.shape.dim) for value in model.graph.output]


@STRATEGY_SETTINGS
@given(graph=float_graphs())
def test_float_graphs_are_valid_and_run_with_their_declared_shapes(graph: FuzzGraph) -> None:
    onnx.checker.check_model(graph.model, full_check=True)
    outputs = run_reference(graph)
    assert [o.shape for o in outputs] == declared_shapes(graph.model)
    assert all(np.all(np.isfinite(o)) for o in outputs)
    assert all(o.size <= 4096 for o in outputs)


@STRATEGY_SETTINGS
@given(graph=qdq_graphs())
def test_qdq_graphs_quantise_every_activation_and_weight(graph: FuzzGraph) -> None:
    onnx.checker.check_model(graph.model, full_check=True)
    outputs = run_reference(graph)
    assert [o.shape for o in outputs] == declared_shapes(graph.model)
    producers = {output: node for node in graph.model.graph.node for output in node.output}
    constants = {tensor.name: tensor for tensor in graph.model.graph.initializer}
    for node in graph.model.graph.node:
        if node.op_type in QDQ_OPS:
            continue
        for name in node.input:
            if not name:
                continue
            if name in constants:
                assert constants[name].data_type != onnx.TensorProto.FLOAT or node.op_type == "Clip", (node.op_type, name)
            else:
                assert producers[name].op_type == "DequantizeLinear", (node.op_type, name)
        assert all(consumer.op_type == "QuantizeLinear" for consumer in graph.model.graph.node
                   if node.output[0] in consumer.input), node.op_type


def test_strategies_reach_every_op_and_the_main_features() -> None:
    ops: Counter[str] = Counter()
    features: Counter[str] = Counter()

    @settings(max_examples=250, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(graph=float_graphs())
    def collect(graph: FuzzGraph) -> None:
        ops.update(graph.ops)
        features.update(dict(graph.features))

    collect()
    expected = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Sub", "Relu", "Sigmoid", "Tanh", "MaxPool", "AveragePool",
                "GlobalAveragePool", "Reshape", "Flatten", "Transpose", "Concat"}
    assert expected <= set(ops), expected - set(ops)
    for feature in ("Conv:depthwise", "Conv:grouped", "Conv:strided", "Conv:padded", "Conv:dilated", "Conv:1d",
                    "Conv:2d", "branch:Add", "branch:Concat", "graph:several-outputs"):
        assert features[feature], feature
