"""Element-wise float32 operators: binary with broadcasting, and unary activations.

These are the runtime's vectorised kernels, so every other module of the family that maps the same op type
(``typed_arithmetic``, ``float_math``, ``signs``, ``variadic``) declines float32 or is tried after this one.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import (
    CALL_WITH_MATH,
    FLOAT_BINARY,
    FLOAT_UNARY,
    HEADERS,
    MAX_DIMS,
    c_float,
    single_binding,
)
from deeploy_generic_c.kernels.loops import BINARY_EXPRESSIONS, binary_loop, clip_loop, flat_loop

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
        # Written into the layer with its constant shapes (see kernels/loops.py): no kernel to link, vectorisable.
        representation["call"] = binary_loop(BINARY_EXPRESSIONS[self.kernel], a.c_name, tuple(a.shape), b.c_name,
                                             tuple(b.shape), y.c_name, tuple(y.shape))
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
        values = [float(NodeParser.attribute(node, name, default)) for name, default in self.params]
        extra = "".join(f", {c_float(value)}" for value in values)
        return {"call": f"dcg_{self.kernel}_f32({x.c_name}, {y.c_name}, {y.numel}{extra});", "size": y.numel}


class ClipParser(NodeParser):
    """min/max given as constant inputs (opset >= 11) or absent (no bound)."""

    inputs = (1, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        bounds = []
        for index, default in ((1, -math.inf), (2, math.inf)):
            if not NodeParser.is_present(node, index):
                bounds.append(default)
                continue
            values = ctxt[node.inputs[index].name].values
            if values is None:
                raise NodeMismatch("shape", "min/max must be constants")
            bounds.append(float(np.asarray(values).reshape(-1)[0]))
        low, high = (None if math.isinf(bound) else c_float(bound) for bound in bounds)
        return {"call": clip_loop(x.c_name, y.c_name, y.numel, low, high), "size": y.numel}


class GeluParser(NodeParser):
    """approximate = none or tanh."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        approximate = NodeParser.attribute(node, "approximate", "none")
        if approximate not in ("none", "tanh"):
            raise NodeMismatch("attribute", f"approximate={approximate!r} is not supported")
        flag = 1 if approximate == "tanh" else 0
        return {"call": f"dcg_gelu_f32({x.c_name}, {y.c_name}, {y.numel}, {flag});", "size": y.numel}


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
MAPPERS["Clip"] = _mapper(ClipParser(), NodeTypeChecker((dtypes.FLOAT32, dtypes.FLOAT32, dtypes.FLOAT32), (dtypes.FLOAT32,)), "Clip float32")
MAPPERS["Gelu"] = _mapper(GeluParser(), FLOAT_UNARY, "Gelu float32")


class RoundParser(NodeParser):
    """Round half to even, as nearbyintf() does in C's default rounding mode, but without a libm call per element.

    Adding 2^23 to a magnitude below 2^23 leaves no fraction bits, so the FPU
    rounds it to an integer (half to even) and subtracting 2^23 again is exact;
    magnitudes from 2^23 up (and inf, NaN) are integers already and pass
    through.  copysignf puts the sign back, so -0.3 gives -0.0 as nearbyintf
    does.  gcc vectorises the loop; a call to nearbyintf (x86-64 without
    SSE4.1 has no rounding instruction) cost 3 ns per element.
    """

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        body = (f"const float v = {x.c_name}[i], m = fabsf(v), r = (m + 0x1p23f) - 0x1p23f; "
                f"{y.c_name}[i] = m < 0x1p23f ? copysignf(r, v) : v;")
        return {"call": flat_loop(y.numel, body), "size": y.numel}


MAPPERS["Round"] = _mapper(RoundParser(), FLOAT_UNARY, "Round float32")
