"""The front end's shape folding honours ``Shape``'s ``start``/``end`` (opset 15).

onnx-graphsurgeon folds ``Shape`` to the input's whole shape; ONNX's own
``GroupNormalization`` function body reads ``Shape(X, start=1, end=2)``, and
its expanded form (whose shapes inference leaves open, so the front end folds)
was reshaped to a 13-D shape instead of ``[N, G, -1]``.  The body is taken
from onnx's schema and given to the importer as a model-local function.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.frontend.importer import canonicalise

SHAPE = [3, 4, 2, 2]


def _group_norm_body(node: onnx.NodeProto) -> onnx.FunctionProto:
    schema = onnx.defs.get_schema("GroupNormalization", 21)
    types = [helper.make_tensor_type_proto(TensorProto.FLOAT, shape) for shape in (SHAPE, [4], [4])]
    body = onnx.FunctionProto.FromString(schema.get_context_dependent_function_with_opset_version(
        21, node.SerializeToString(), [proto.SerializeToString() for proto in types]))
    body.domain, body.name = "local", "GroupNormExpanded"
    return body


def test_expanded_group_normalization_folds_its_shape_slices() -> None:
    standard = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=2, epsilon=1e-5)
    expanded = helper.make_node("GroupNormExpanded", ["x", "scale", "bias"], ["y"], domain="local")
    parameters = [numpy_helper.from_array(np.array([1.0, -2.0, 0.5, 3.0], np.float32), "scale"),
                  numpy_helper.from_array(np.array([0.1, 0.2, -0.3, 0.4], np.float32), "bias")]

    def model(node: onnx.NodeProto, functions: list[onnx.FunctionProto]) -> onnx.ModelProto:
        graph = helper.make_graph([node], "expanded", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)], parameters)
        opsets = [helper.make_opsetid("", 21), helper.make_opsetid("local", 1)]
        return helper.make_model(graph, opset_imports=opsets, functions=functions)

    x = np.random.default_rng(31).standard_normal(SHAPE).astype(np.float32)
    expected = ReferenceEvaluator(model(standard, [])).run(None, {"x": x})[0]
    imported = canonicalise(model(expanded, [_group_norm_body(standard)]))
    np.testing.assert_allclose(ReferenceEvaluator(imported.model).run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-5)
