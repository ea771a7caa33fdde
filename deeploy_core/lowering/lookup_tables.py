"""The 256 outputs of a quantised element-wise function, in each mode's arithmetic.

An element-wise op between a per-tensor DequantizeLinear and a per-tensor
QuantizeLinear on 8-bit tensors (TFLite's int8 Logistic, Tanh, HardSwish,
LeakyRelu, its rescaling QUANTIZE) maps each of the 256 input values to one
output value, so the whole layer is a table lookup: integer-only at run time,
whatever the function.

* exact mode asks ONNX Runtime itself for the table (the island run on all
  256 inputs with graph optimisations off), so the layer is ONNX Runtime's
  by construction, whatever approximation its kernels use;
* fixed-point mode computes the function in float64 and rounds the way TFLite
  quantises (half away from zero); a rescale alone (DequantizeLinear →
  QuantizeLinear) is TFLite's integer requantisation.  TFLite's own int8
  transcendental kernels use fixed-point approximations of their own, so for
  those this table is the correctly rounded value, which may sit one step from
  LiteRT's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from deeploy_core.lowering.tflite_requantize import multiply_by_quantized_multiplier, quantize_multiplier


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(x)


FLOAT64_FUNCTIONS: dict[str, Callable[[np.ndarray, dict[str, float]], np.ndarray]] = {
    "Identity": lambda x, a: x,
    "Relu": lambda x, a: np.maximum(x, 0.0),
    "Sigmoid": lambda x, a: 1.0 / (1.0 + np.exp(-x)),
    "Tanh": lambda x, a: np.tanh(x),
    "HardSigmoid": lambda x, a: np.clip(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0.0, 1.0),
    "HardSwish": lambda x, a: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "LeakyRelu": lambda x, a: np.where(x >= 0, x, a.get("alpha", 0.01) * x),
    "Elu": lambda x, a: np.where(x >= 0, x, a.get("alpha", 1.0) * np.expm1(x)),
    "Gelu": lambda x, a: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))),
    "Softplus": lambda x, a: np.logaddexp(0.0, x),
    "Exp": lambda x, a: np.exp(x),
    "Neg": lambda x, a: -x,
    "Abs": lambda x, a: np.abs(x),
}
"""The ops a table replaces, as float64 functions of the dequantised value (attributes by ONNX name)."""


def all_values(dtype: np.dtype) -> np.ndarray:
    """Every value of an 8-bit integer type, in table order (the index is ``value - min``)."""
    info = np.iinfo(dtype)
    return np.arange(info.min, info.max + 1, dtype=np.int64).astype(dtype)


def onnx_runtime_table(op: str | None, attributes: dict[str, object], x_scale: np.float32, x_zero: np.ndarray,
                       y_scale: np.float32, y_zero: np.ndarray) -> np.ndarray:
    """What ONNX Runtime computes for DequantizeLinear → op → QuantizeLinear on every input value."""
    import onnxruntime as ort  # only when a table is built: the core imports fast without it

    x_type = helper.np_dtype_to_tensor_dtype(x_zero.dtype)
    inits = [numpy_helper.from_array(np.asarray(x_scale, np.float32), "xs"), numpy_helper.from_array(x_zero, "xz"),
             numpy_helper.from_array(np.asarray(y_scale, np.float32), "ys"), numpy_helper.from_array(y_zero, "yz")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["v"])]
    if op is not None:
        node = helper.make_node(op, ["v"], ["f"])
        node.attribute.extend(helper.make_attribute(key, value) for key, value in sorted(attributes.items()))
        nodes.append(node)
    nodes.append(helper.make_node("QuantizeLinear", ["f" if op is not None else "v", "ys", "yz"], ["y"]))
    graph = helper.make_graph(nodes, "table", [helper.make_tensor_value_info("x", x_type, [256])],
                              [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(y_zero.dtype),
                                                             [256])], inits)
    opset = 20 if op in ("Gelu",) else 19
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"x": all_values(x_zero.dtype)})[0])


def tflite_table(op: str | None, attributes: dict[str, float], x_scale: np.float32, x_zero: np.ndarray,
                 y_scale: np.float32, y_zero: np.ndarray) -> np.ndarray:
    """The fixed-point table: TFLite's requantisation for a rescale, else the correctly rounded function."""
    values = all_values(x_zero.dtype).astype(np.int64)
    info = np.iinfo(y_zero.dtype)
    zx, zy = int(x_zero.reshape(-1)[0]), int(y_zero.reshape(-1)[0])
    if op is None or op == "Identity":
        multiplier, shift = quantize_multiplier(float(x_scale) / float(y_scale))
        scaled = np.array([multiply_by_quantized_multiplier(int(v) - zx, multiplier, shift) for v in values])
        return np.clip(scaled + zy, info.min, info.max).astype(y_zero.dtype)
    real = FLOAT64_FUNCTIONS[op]((values - zx) * float(x_scale), attributes) / float(y_scale)
    rounded = np.sign(real) * np.floor(np.abs(real) + 0.5)
    return np.clip(rounded + zy, info.min, info.max).astype(y_zero.dtype)


def model_attributes(node_attrs: dict[str, object]) -> dict[str, object]:
    """A node's attributes as onnx.helper takes them (graphsurgeon keeps them as Python values)."""
    return {key: value for key, value in node_attrs.items() if not isinstance(value, onnx.TensorProto)}
