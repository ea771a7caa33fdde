"""Regression: a quantised classifier tail that gcc 12 -O2 once turned into wrong code.

DequantizeLinear → GlobalAveragePool → QuantizeLinear → DequantizeLinear →
Flatten → QuantizeLinear → DequantizeLinear (SqueezeNet's end, int8 QDQ) gave
10/10 wrong outputs at -O2 while -O0, -O1, -O3 and -O2 -fno-ivopts were right:
with every buffer addressed as a constant offset from one static array, IVOPTs
rewrote the int8-load/float-store loops into addresses with no base object and
the stores of two DequantizeLinear layers were dropped (the calls of layer functions
that gcc's pure-const analysis wrongly found pure: docs/correctness.rst).  Every tensor
is now a pointer variable of its own, set by ``InitNetwork``; this network must be
exact at the default -O2 in both quantisation modes.

Exact mode is compared with ONNX Runtime.  Fixed-point mode computes TFLite's
MEAN for the global average pool (one multiplier folding the scales and
1/9, two roundings), which may land a step from ONNX Runtime, so it is
compared bit for bit with TFLite's arithmetic instead (the numpy model of
``tflite_arithmetic``): dropped stores would show either way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.plugins import PluginHost
from deeploy_generic_c.parsing.tflite_arithmetic import mean, mean_parameters
from deeploy_generic_c.platform import generic_c_platform


def _tail_network(path: Path) -> Path:
    scale = numpy_helper.from_array(np.array(0.05, np.float32), "s")
    zero_point = numpy_helper.from_array(np.array(3, np.int8), "z")
    chain = [("DequantizeLinear", "x", "d0"), ("GlobalAveragePool", "d0", "g"), ("QuantizeLinear", "g", "q1"),
             ("DequantizeLinear", "q1", "d1"), ("Flatten", "d1", "f"), ("QuantizeLinear", "f", "q2"),
             ("DequantizeLinear", "q2", "y")]
    nodes = [helper.make_node(op, [source, "s", "z"] if op.endswith("uantizeLinear") else [source], [target], name=target)
             for op, source, target in chain]
    graph = helper.make_graph(nodes, "tail", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 10, 3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], [scale, zero_point])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def _tflite_tail(x: np.ndarray) -> np.ndarray:
    """TFLite's MEAN over the 3x3 plane (scale 0.05 and zero point 3 in and out), flattened and dequantised."""
    multiplier, shift = mean_parameters(0.05, 0.05, 9)
    pooled = mean(x, (2, 3), 3, multiplier, shift, 3, -128, 127).reshape(1, 10)
    return (pooled.astype(np.float32) - np.float32(3)) * np.float32(0.05)


@pytest.mark.parametrize("quantization", ["exact", "fixed-point"])
def test_quantised_tail_is_exact_at_the_default_optimisation_level(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path, quantization: str
) -> None:
    model = _tail_network(tmp_path / "tail.onnx")
    assert "-O2" in generic_c_platform().runtime.cflags, "the regression needs the default optimisation level"
    inputs = {"x": np.random.default_rng(0).integers(-128, 128, (1, 10, 3, 3)).astype(np.int8)}
    options = CompileOptions(platform="generic-c", quantization=quantization)
    expected = None if quantization == "exact" else [_tflite_tail(inputs["x"])]
    generated, result = validate_with_data(model, options, generic_c_host, inputs, expected, atol=0.0, rtol=0.0,
                                           cache_dir=runtime_cache)
    if quantization == "fixed-point":
        assert [layer["requantization"]["arithmetic"] for layer in generated.report["layers"]
                if layer["op"] == "QLinearGlobalAveragePool"] == ["tflite"]
    source = generated.files["Network.c"]
    assert "(DC_ARENA_BASE +" not in source and "static int8_t *dc_in_x;" in source, \
        "every tensor is a pointer variable of its own, not an offset from one base"
    assert result.ok, [(c.name, c.max_abs_error, c.mismatches) for c in result.comparisons]
