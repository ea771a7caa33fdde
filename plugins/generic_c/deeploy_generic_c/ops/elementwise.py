"""Element-wise float32 operators: binary with broadcasting, and unary activations."""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    FLOAT32,
    NetworkContext,
    NodeMapper,
    NodeMismatch,
    NodeParser,
    NodeTemplate,
    NodeTypeChecker,
    OperatorRepresentation,
    attribute,
    is_present,
)
from deeploy_generic_c.ops._common import (
    FLOAT_BINARY,
    FLOAT_UNARY,
    HEADERS,
    MAX_DIMS,
    broadcast_strides,
    c_float,
    collapse_broadcast,
    int_array,
    single_binding,
)

BINARY_OPS = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow", "Max": "max", "Min": "min"}


class BinaryParser(NodeParser):
    """Numpy broadcasting between two tensors of any rank up to 8."""

    inputs = (2, 2)

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        if len(y.shape) > MAX_DIMS:
            raise NodeMismatch("shape", f"rank {len(y.shape)} exceeds {MAX_DIMS}")
        representation: OperatorRepresentation = {"A": a.c_name, "B": b.c_name, "Y": y.c_name, "size": y.numel}
        if a.shape == b.shape or (a.numel == b.numel == y.numel):
            representation["call"] = f"dcg_{self.kernel}_f32({a.c_name}, {b.c_name}, {y.c_name}, {y.numel});"
        elif b.numel == 1 and a.numel == y.numel:
            representation["call"] = f"dcg_{self.kernel}_scalar_f32({a.c_name}, {b.c_name}, {y.c_name}, {y.numel});"
        elif a.numel == 1 and b.numel == y.numel:
            representation["call"] = f"dcg_{self.kernel}_rscalar_f32({a.c_name}, {b.c_name}, {y.c_name}, {y.numel});"
        else:
            shape, (a_strides, b_strides) = collapse_broadcast(
                y.shape, [broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)]
            )
            representation["call"] = (
                f"dcg_{self.kernel}_bcast_f32({a.c_name}, {b.c_name}, {y.c_name}, {len(shape)}, "
                f"{int_array(shape)}, {int_array(a_strides)}, {int_array(b_strides)});"
            )
        return representation


UNARY_OPS = {
    "Relu": "relu", "Sqrt": "sqrt", "Exp": "exp", "Log": "log", "Sigmoid": "sigmoid", "Tanh": "tanh",
    "Floor": "floor", "Ceil": "ceil", "Neg": "neg", "Abs": "abs", "Reciprocal": "reciprocal", "Erf": "erf",
    "Softplus": "softplus", "HardSwish": "hardswish",
}


class UnaryParser(NodeParser):
    """Any shape; parameters from attributes."""

    def __init__(self, kernel: str, params: tuple[tuple[str, float], ...] = ()) -> None:
        self.kernel = kernel
        self.params = params

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        values = [float(attribute(node, name, default)) for name, default in self.params]
        extra = "".join(f", {c_float(value)}" for value in values)
        return {"call": f"dcg_{self.kernel}_f32({x.c_name}, {y.c_name}, {y.numel}{extra});", "size": y.numel}


class ClipParser(NodeParser):
    """min/max given as constant inputs (opset >= 11) or absent (no bound)."""

    inputs = (1, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        bounds = []
        for index, default in ((1, -math.inf), (2, math.inf)):
            if not is_present(node, index):
                bounds.append(default)
                continue
            values = ctxt[node.inputs[index].name].values
            if values is None:
                raise NodeMismatch("shape", "min/max must be constants")
            bounds.append(float(np.asarray(values).reshape(-1)[0]))
        return {
            "call": f"dcg_clip_f32({x.c_name}, {y.c_name}, {y.numel}, {c_float(bounds[0])}, {c_float(bounds[1])});",
            "size": y.numel,
        }


class GeluParser(NodeParser):
    """approximate = none or tanh."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        approximate = attribute(node, "approximate", "none")
        if approximate not in ("none", "tanh"):
            raise NodeMismatch("attribute", f"approximate={approximate!r} is not supported")
        flag = 1 if approximate == "tanh" else 0
        return {"call": f"dcg_gelu_f32({x.c_name}, {y.c_name}, {y.numel}, {flag});", "size": y.numel}


CALL_WITH_MATH = NodeTemplate("${call}", headers=HEADERS + ("math.h",))


def _mapper(parser: NodeParser, checker: NodeTypeChecker, name: str) -> tuple[NodeMapper, ...]:
    return single_binding(parser, checker, name, CALL_WITH_MATH)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {}
for _op, _kernel in BINARY_OPS.items():
    MAPPERS[_op] = _mapper(BinaryParser(_kernel), FLOAT_BINARY, f"{_op} float32")
for _op, _kernel in UNARY_OPS.items():
    MAPPERS[_op] = _mapper(UnaryParser(_kernel), FLOAT_UNARY, f"{_op} float32")
MAPPERS["HardSigmoid"] = _mapper(UnaryParser("hardsigmoid", (("alpha", 0.2), ("beta", 0.5))), FLOAT_UNARY, "HardSigmoid float32")
MAPPERS["LeakyRelu"] = _mapper(UnaryParser("leakyrelu", (("alpha", 0.01),)), FLOAT_UNARY, "LeakyRelu float32")
MAPPERS["Elu"] = _mapper(UnaryParser("elu", (("alpha", 1.0),)), FLOAT_UNARY, "Elu float32")
MAPPERS["Swish"] = _mapper(UnaryParser("swish", (("alpha", 1.0),)), FLOAT_UNARY, "Swish float32")
MAPPERS["Clip"] = _mapper(ClipParser(), NodeTypeChecker((FLOAT32, FLOAT32, FLOAT32), (FLOAT32,)), "Clip float32")
MAPPERS["Gelu"] = _mapper(GeluParser(), FLOAT_UNARY, "Gelu float32")


class RoundParser(NodeParser):
    """Round half to even (the current rounding mode of C99's nearbyintf)."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        return {"call": f"for (int32_t i = 0; i < {y.numel}; ++i) {y.c_name}[i] = nearbyintf({x.c_name}[i]);", "size": y.numel}


MAPPERS["Round"] = _mapper(RoundParser(), FLOAT_UNARY, "Round float32")
