"""Float unary math in float32 and float64 (trigonometric, hyperbolic, Celu, Selu, Shrink, Softsign,
ThresholdedRelu; Mish written but left to the example plugin), the float64 forms of :mod:`.float32`'s activations, and PRelu with a
numpy-broadcast slope.

Each op is one C expression of the element ``x`` written once for both
precisions: math.h's ``sinf``/``sin`` is chosen by the element type, constants
are exact literals of that type, so float32 never rounds through double.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import DataType, NodeMapper, NodeParser, dtypes
from deeploy_generic_c.kernels.typed import FLOATS, c_literal, math_function, shared_type
from deeploy_generic_c.parsing.typed_parser import TypedElementwiseParser, typed_mapper


@dataclass(frozen=True)
class Precision:
    """Spells math functions and constants in one float type."""

    dtype: DataType

    def fn(self, name: str) -> str:
        return math_function(name, self.dtype)

    def lit(self, value: float) -> str:
        return c_literal(value, self.dtype)


Expression = Callable[[str, Precision, Callable[[str, float], float]], str]
"""``expression(x, precision, attr)``; ``attr(name, default)`` reads a float attribute of the node."""

_TRIGONOMETRY = ("Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tanh", "Asinh", "Acosh", "Atanh",
                 "Sqrt", "Exp", "Log", "Erf", "Floor", "Ceil")


def _function(name: str) -> Expression:
    return lambda x, p, attr: f"{p.fn(name)}({x})"


def _softplus(x: str, p: Precision) -> str:
    """log(1 + e^x) without overflowing e^x for large x."""
    return f"({x} > 0 ? {x} + {p.fn('log1p')}({p.fn('exp')}(-{x})) : {p.fn('log1p')}({p.fn('exp')}({x})))"


EXPRESSIONS: dict[str, Expression] = {
    **{op: _function(op.lower()) for op in _TRIGONOMETRY},
    "Round": _function("nearbyint"),
    "Relu": lambda x, p, attr: f"{x} > 0 ? {x} : {p.lit(0)}",
    "Reciprocal": lambda x, p, attr: f"{p.lit(1)} / {x}",
    "Sigmoid": lambda x, p, attr: f"{p.lit(1)} / ({p.lit(1)} + {p.fn('exp')}(-{x}))",
    "Softplus": lambda x, p, attr: _softplus(x, p),
    "Softsign": lambda x, p, attr: f"{x} / ({p.lit(1)} + {p.fn('fabs')}({x}))",
    "Mish": lambda x, p, attr: f"{x} * {p.fn('tanh')}({_softplus(x, p)})",
    "HardSwish": lambda x, p, attr: (f"{x} * {p.fn('fmax')}({p.lit(0)}, {p.fn('fmin')}({p.lit(1)}, "
                                     f"{x} * {p.lit(1 / 6)} + {p.lit(0.5)}))"),
    "HardSigmoid": lambda x, p, attr: (f"{p.fn('fmax')}({p.lit(0)}, {p.fn('fmin')}({p.lit(1)}, "
                                       f"{x} * {p.lit(attr('alpha', 0.2))} + {p.lit(attr('beta', 0.5))}))"),
    "LeakyRelu": lambda x, p, attr: f"{x} >= 0 ? {x} : {x} * {p.lit(attr('alpha', 0.01))}",
    "Elu": lambda x, p, attr: f"{x} >= 0 ? {x} : {p.lit(attr('alpha', 1.0))} * {p.fn('expm1')}({x})",
    "ThresholdedRelu": lambda x, p, attr: f"{x} > {p.lit(attr('alpha', 1.0))} ? {x} : {p.lit(0)}",
    "Celu": lambda x, p, attr: (f"{x} >= 0 ? {x} : {p.lit(attr('alpha', 1.0))} * "
                                f"{p.fn('expm1')}({x} / {p.lit(attr('alpha', 1.0))})"),
    "Selu": lambda x, p, attr: (f"{p.lit(attr('gamma', 1.05070102214813232421875))} * ({x} > 0 ? {x} : "
                                f"{p.lit(attr('alpha', 1.67326319217681884765625))} * {p.fn('expm1')}({x}))"),
    "Shrink": lambda x, p, attr: (f"{x} < -{p.lit(attr('lambd', 0.5))} ? {x} + {p.lit(attr('bias', 0.0))} : "
                                  f"{x} > {p.lit(attr('lambd', 0.5))} ? {x} - {p.lit(attr('bias', 0.0))} : {p.lit(0)}"),
}

FLOAT32_ELSEWHERE = ("Tanh", "Sqrt", "Exp", "Log", "Erf", "Floor", "Ceil", "Round", "Relu", "Reciprocal", "Sigmoid",
                     "Softplus", "HardSwish", "HardSigmoid", "LeakyRelu", "Elu")
""":mod:`.float32` has float32 kernels of these; here they are float64 only."""

LEFT_TO_THE_EXAMPLE_PLUGIN = ("Mish",)
"""Not registered: examples/operator-plugin adds Mish to the platforms, and its tests (tests/test_operator_plugin_
example.py, test_report_schema.py) need a platform without it.  The expression stays so that registering it is one
line once the example moves to another op."""

REGISTERED = tuple(op for op in EXPRESSIONS if op not in LEFT_TO_THE_EXAMPLE_PLUGIN)

NODE_TESTED = tuple(op for op in REGISTERED if op not in FLOAT32_ELSEWHERE) + ("PRelu",)


class FloatUnaryParser(TypedElementwiseParser):
    """One float operand; attributes as ONNX defines them."""

    def __init__(self, op: str) -> None:
        self.op = op

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        def attr(name: str, default: float) -> float:
            return float(NodeParser.attribute(node, name, default))

        return EXPRESSIONS[self.op](values[0], Precision(out), attr)


class PReluParser(TypedElementwiseParser):
    """x where x >= 0, slope * x elsewhere; the slope broadcasts to x (numpy)."""

    inputs = (2, 2)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        x, slope = values
        return f"{x} < 0 ? {slope} * {x} : {x}"


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    op: typed_mapper(FloatUnaryParser(op), shared_type((dtypes.FLOAT64,) if op in FLOAT32_ELSEWHERE else FLOATS),
                     f"{op} float64" if op in FLOAT32_ELSEWHERE else f"{op} float32/float64")
    for op in REGISTERED
}
MAPPERS["PRelu"] = typed_mapper(PReluParser(), shared_type(FLOATS), "PRelu float32/float64")
