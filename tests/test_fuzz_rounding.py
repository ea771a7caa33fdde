"""Which fixed-point outputs the fuzzer holds to one quantisation step (``deeploy_core.testing.fuzz.rounding``)."""

from __future__ import annotations

from deeploy_core.testing.fuzz.rounding import Rounding, judged_outputs, tensor_rounding


def layer(op: str, inputs: list[str], outputs: list[str]) -> dict:
    return {"op": op, "inputs": [{"name": name} for name in inputs], "outputs": [{"name": name} for name in outputs]}


LAYERS = [
    layer("QuantizeLinear", ["x", "s", "z"], ["xq"]),
    layer("QLinearConv", ["xq", "s", "z", "w", "s", "z", "s", "z"], ["conv"]),  # bit exact: rounds as ONNX Runtime
    layer("QLinearAveragePool", ["conv", "s", "z", "s", "z"], ["a"]),  # one rounding
    layer("Reshape", ["a", "shape"], ["b"]),  # copies it
    layer("DequantizeLinear", ["b", "s", "z"], ["bd"]),
    layer("Sigmoid", ["bd"], ["c"]),  # a steep function of a one-step difference
    layer("QuantizeLinear", ["c", "s", "z"], ["cq"]),
    layer("QLinearAdd", ["a", "s", "z", "xq", "s", "z", "s", "z"], ["d"]),  # a second rounding on top of the first
    layer("Relu", ["x"], ["e"]),  # exact: no fixed-point layer upstream
]


def test_one_fixed_point_layer_and_copies_after_it_are_judged_nothing_after_a_second_rounding() -> None:
    rounding = tensor_rounding(LAYERS)
    assert rounding["xq"] is rounding["conv"] is rounding["e"] is Rounding.EXACT
    assert rounding["a"] is rounding["b"] is rounding["bd"] is Rounding.ONE_STEP
    assert rounding["c"] is rounding["cq"] is rounding["d"] is Rounding.UNBOUNDED
    assert judged_outputs(LAYERS, ["bd", "conv", "cq", "d", "e", "x"]) == ["bd", "conv", "e", "x"]
