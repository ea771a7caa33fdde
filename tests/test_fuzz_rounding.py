"""Which fixed-point outputs the fuzzer holds to one quantisation step (``deeploy_core.testing.fuzz.rounding``).

A layer's rounding is read from its report row: TFLite's arithmetic (fixed-point mode's fused nodes) rounds on its
own whatever the op, ONNX Runtime's float32 arithmetic (exact mode, and QOperator convolutions) does not, and the
31-bit kernels of QOperator files round Add, Mul and the average pools on their own.
"""

from __future__ import annotations

import pytest

from deeploy_core.testing.fuzz.rounding import Rounding, judged_outputs, rounds_on_its_own, tensor_rounding

TFLITE = {"arithmetic": "tflite", "rounding": "double", "multiplier": 1 << 30, "shift": -3, "zero_point": 0,
          "range": [-128, 127]}
TFLITE_SINGLE = {**TFLITE, "rounding": "single"}
FLOAT32 = {"arithmetic": "float32", "scale": 0.01, "zero_point": 0, "range": [-128, 127]}
FLOAT32_EMULATION = {"multiplier": 1 << 23, "shift": 30, "rounding": "float32", "zero_point": 0, "range": [-128, 127]}
THIRTY_ONE_BIT = {"multiplier": 1 << 30, "shift": 33, "zero_point": 0, "range": [-128, 127]}


def layer(op: str, inputs: list[str], outputs: list[str], requantization: dict | None = None) -> dict:
    return {"op": op, "inputs": [{"name": name} for name in inputs], "outputs": [{"name": name} for name in outputs],
            "requantization": requantization}


@pytest.mark.parametrize(("op", "requantization", "fixed_point", "exact"), [
    ("QLinearConv", TFLITE, True, True),  # TFLite's double rounding, whichever mode produced it
    ("QLinearMatMul", TFLITE, True, True),
    ("QGemm", TFLITE_SINGLE, True, True),  # FullyConnected: one rounding, still TFLite's, not ONNX Runtime's
    ("QLinearAdd", TFLITE, True, True),
    ("QLinearSoftmax", TFLITE, True, True),
    ("QLinearGlobalAveragePool", {"arithmetic": "tflite", "average": "rounded half away from zero"}, True, True),
    ("QLinearConv", FLOAT32, False, False),  # ONNX Runtime's float32 requantisation
    ("QLinearAdd", FLOAT32, False, False),  # ONNX Runtime's unfused float arithmetic inside the kernel
    ("QLinearConv", FLOAT32_EMULATION, False, False),  # QOperator file: float32 emulated on integers, bit exact
    ("QLinearAdd", THIRTY_ONE_BIT, True, True),  # QOperator file: the exact sum rounded once
    ("QLinearAveragePool", THIRTY_ONE_BIT, True, True),  # also fixed-point's rescaling pool (TFLite has none)
    ("IntegerLookup", None, True, False),  # TFLite's/correctly rounded table vs ONNX Runtime's own table
    ("QuantizeLinear", {"scale": 0.5, "zero_point": 0, "range": [-128, 127]}, False, False),
    ("Sigmoid", None, False, False),  # a float fallback runs as ONNX Runtime runs it
])
def test_a_layer_rounds_on_its_own_by_its_reported_arithmetic(op: str, requantization: dict | None,
                                                               fixed_point: bool, exact: bool) -> None:
    row = layer(op, ["a"], ["b"], requantization)
    assert rounds_on_its_own(row, "fixed-point") is fixed_point
    assert rounds_on_its_own(row, "exact") is exact


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="quantization"):
        rounds_on_its_own(layer("Relu", ["a"], ["b"]), "fixed_point")


LAYERS = [
    layer("QuantizeLinear", ["x", "s", "z"], ["xq"]),
    layer("QLinearConv", ["xq", "s", "z", "w", "s", "z", "s", "z"], ["conv"], FLOAT32_EMULATION),  # bit exact
    layer("QLinearAveragePool", ["conv", "s", "z", "s", "z"], ["a"], THIRTY_ONE_BIT),  # one rounding
    layer("Reshape", ["a", "shape"], ["b"]),  # copies it
    layer("DequantizeLinear", ["b", "s", "z"], ["bd"]),
    layer("Sigmoid", ["bd"], ["c"]),  # a steep function of a one-step difference
    layer("QuantizeLinear", ["c", "s", "z"], ["cq"]),
    layer("QLinearAdd", ["a", "s", "z", "xq", "s", "z", "s", "z"], ["d"], THIRTY_ONE_BIT),  # a second rounding
    layer("Relu", ["x"], ["e"]),  # exact: no layer of its own rounding upstream
    layer("QLinearConv", ["xq", "s", "z", "w", "s", "z", "s", "z"], ["t1"], TFLITE),  # TFLite: one rounding
    layer("MaxPool", ["t1"], ["t2"]),  # copies it
    layer("QLinearConv", ["t2", "s", "z", "w", "s", "z", "s", "z"], ["t3"], TFLITE),  # two TFLite layers deep
    layer("IntegerLookup", ["xq", "table"], ["l1"]),
    layer("IntegerLookup", ["l1", "table"], ["l2"]),
]


def test_one_layer_of_its_own_rounding_and_copies_after_it_are_judged_nothing_after_a_second_rounding() -> None:
    rounding = tensor_rounding(LAYERS)
    assert rounding["xq"] is rounding["conv"] is rounding["e"] is Rounding.EXACT
    assert rounding["a"] is rounding["b"] is rounding["bd"] is Rounding.ONE_STEP
    assert rounding["t1"] is rounding["t2"] is rounding["l1"] is Rounding.ONE_STEP
    assert rounding["c"] is rounding["cq"] is rounding["d"] is Rounding.UNBOUNDED
    assert rounding["t3"] is rounding["l2"] is Rounding.UNBOUNDED
    outputs = ["bd", "conv", "cq", "d", "e", "x", "t2", "t3", "l1", "l2"]
    assert judged_outputs(LAYERS, outputs) == ["bd", "conv", "e", "x", "t2", "l1"]
    # In exact mode the tables are ONNX Runtime's own values: a chain of them stays exact.
    assert tensor_rounding(LAYERS, "exact")["l2"] is Rounding.EXACT
    assert judged_outputs(LAYERS, outputs, "exact") == ["bd", "conv", "e", "x", "t2", "l1", "l2"]
