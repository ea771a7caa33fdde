"""Single-Conv float models for the convolution tests (test_conv_direct.py, test_conv_blocked.py): one case shape,
one model builder, so both kernel paths are tested on models built the same way."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


@dataclass(frozen=True)
class ConvCase:
    """A Conv layer: input channels, filters, spatial input size, kernel, ONNX attributes, bias, batch."""

    channels: int
    filters: int
    spatial: tuple[int, ...]
    kernel: tuple[int, ...]
    attrs: dict[str, object] = field(default_factory=dict)
    bias: bool = True
    batch: int = 1


def conv_model(case: ConvCase) -> onnx.ModelProto:
    """The case as a one-node model with seeded random weights (and bias), output shape inferred."""
    rng = np.random.default_rng(len(case.spatial) * 100 + case.channels + case.filters)
    group = int(case.attrs.get("group", 1))
    weight = rng.standard_normal((case.filters, case.channels // group, *case.kernel)).astype(np.float32)
    inits = [numpy_helper.from_array(weight, "w")]
    inputs = ["x", "w"]
    if case.bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(case.filters).astype(np.float32), "b"))
        inputs.append("b")
    node = helper.make_node("Conv", inputs, ["y"], kernel_shape=list(case.kernel), **case.attrs)
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [case.batch, case.channels, *case.spatial])
    graph = helper.make_graph([node], "conv", [x_info], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
