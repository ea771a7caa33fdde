"""The order in which the generic C platform tries the mappers of one op type (``deeploy_generic_c.ops``).

The first mapper that accepts a layer writes its code, so for an op that several kernels serve this order is
part of the generated code.  It is written out in ``deeploy_generic_c/ops/__init__.py`` (``FAMILIES`` and each
family's ``MAPPERS``); these tests pin the parser sequence of every op type with mappers of more than one
kernel, as it was when the order still followed the sorted module names, so moving parsers between modules
cannot reorder them unnoticed.
"""

from __future__ import annotations

import pkgutil

import pytest

from deeploy_generic_c import ops

PRECEDENCE: dict[str, tuple[str, ...]] = {
    "Abs": ('UnaryParser', 'AbsParser'),
    "Add": ('WrappingParser', 'BinaryParser', 'IntegerBinaryParser'),
    "Ceil": ('UnaryParser', 'FloatUnaryParser'),
    "Conv": ('IntegerConvParser', 'ConvParser'),
    "Div": ('DivParser', 'BinaryParser'),
    "Elu": ('UnaryParser', 'FloatUnaryParser'),
    "Erf": ('UnaryParser', 'FloatUnaryParser'),
    "Exp": ('UnaryParser', 'FloatUnaryParser'),
    "Floor": ('UnaryParser', 'FloatUnaryParser'),
    "Gather": ('Int32GatherParser', 'GatherParser'),
    "Gemm": ('IntegerGemmParser', 'GemmParser'),
    "HardSigmoid": ('UnaryParser', 'FloatUnaryParser'),
    "HardSwish": ('UnaryParser', 'FloatUnaryParser'),
    "LayerNormalization": ('LayerNormParser', 'LayerNormStatsParser'),
    "LeakyRelu": ('UnaryParser', 'FloatUnaryParser'),
    "Log": ('UnaryParser', 'FloatUnaryParser'),
    "MatMul": ('IntegerMatMulParser', 'MatMulParser'),
    "Max": ('BinaryParser', 'VariadicParser'),
    "MaxPool": ('IntegerMaxPoolParser', 'MaxPoolParser'),
    "Min": ('BinaryParser', 'VariadicParser'),
    "Mul": ('WrappingParser', 'BinaryParser', 'IntegerBinaryParser'),
    "Neg": ('UnaryParser', 'NegParser'),
    "Pad": ('PadParser', 'WrapPadParser'),
    "Pow": ('PowParser', 'BinaryParser'),
    "Reciprocal": ('UnaryParser', 'FloatUnaryParser'),
    "ReduceMax": ('ReduceParser', 'TypedReduceParser'),
    "ReduceMean": ('IntegerReduceParser', 'ReduceParser', 'TypedReduceParser'),
    "ReduceMin": ('ReduceParser', 'TypedReduceParser'),
    "ReduceSum": ('IntegerReduceParser', 'ReduceParser', 'TypedReduceParser'),
    "Relu": ('UnaryParser', 'FloatUnaryParser'),
    "Round": ('RoundParser', 'FloatUnaryParser'),
    "Sigmoid": ('UnaryParser', 'FloatUnaryParser'),
    "Softplus": ('UnaryParser', 'FloatUnaryParser'),
    "Sqrt": ('UnaryParser', 'FloatUnaryParser'),
    "Sub": ('WrappingParser', 'BinaryParser', 'IntegerBinaryParser'),
    "Tanh": ('UnaryParser', 'FloatUnaryParser'),
    "com.microsoft.QLinearAdd": ('QLinearBinaryParser', 'QLinearBinaryFloat32Parser', 'TfliteBinaryParser'),
    "com.microsoft.QLinearAveragePool": ('QLinearAveragePoolParser', 'QLinearAveragePoolFloat32Parser', 'TfliteAveragePoolParser'),
    "com.microsoft.QLinearGlobalAveragePool": ('QLinearAveragePoolParser', 'QLinearAveragePoolFloat32Parser', 'TfliteMeanParser'),
    "com.microsoft.QLinearMul": ('QLinearBinaryParser', 'QLinearBinaryFloat32Parser', 'TfliteBinaryParser'),
    "com.microsoft.QLinearSoftmax": ('QLinearSoftmaxFloat32Parser', 'TfliteSoftmaxParser'),
}
"""Op type -> the parser classes of its mappers, first tried first."""


@pytest.mark.parametrize("op_type", sorted(PRECEDENCE))
def test_mappers_are_tried_in_the_documented_order(op_type: str) -> None:
    mappers = ops.collect_mappers()[op_type]
    assert tuple(type(mapper.parser).__name__ for mapper in mappers) == PRECEDENCE[op_type]


def test_every_family_module_is_listed() -> None:
    """A public module of ``ops`` that is not in ``FAMILIES`` would silently map nothing."""
    public = {info.name for info in pkgutil.iter_modules(ops.__path__) if not info.name.startswith("_")}
    assert public == set(ops.FAMILIES)
    assert len(ops.FAMILIES) == len(set(ops.FAMILIES))
