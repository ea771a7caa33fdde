"""Write the bundled example network: a small float32 CNN classifier (deterministic weights).

    python examples/make_tiny_cnn.py OUT.onnx

Conv → BatchNorm → Relu → MaxPool → depthwise Conv → Relu → Conv (1x1) →
GlobalAveragePool → Flatten → Gemm → Softmax, on a 1×3×32×32 input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def tiny_cnn() -> onnx.ModelProto:
    """The example model (opset 21)."""
    rng = np.random.default_rng(2026)

    def weight(name: str, *shape: int, scale: float = 0.3) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    initializers = [
        weight("conv1_w", 16, 3, 3, 3), weight("conv1_b", 16),
        numpy_helper.from_array((1.0 + 0.1 * rng.standard_normal(16)).astype(np.float32), "bn_scale"),
        weight("bn_bias", 16, scale=0.1), weight("bn_mean", 16, scale=0.1),
        numpy_helper.from_array((1.0 + 0.2 * rng.random(16)).astype(np.float32), "bn_var"),
        weight("dw_w", 16, 1, 3, 3), weight("pw_w", 32, 16, 1, 1), weight("pw_b", 32),
        weight("fc_w", 10, 32), weight("fc_b", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "conv1_w", "conv1_b"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["b1"], name="bn1"),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
        helper.make_node("Conv", ["p1", "dw_w"], ["d1"], pads=[1, 1, 1, 1], group=16, name="depthwise"),
        helper.make_node("Relu", ["d1"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "pw_w", "pw_b"], ["c2"], name="pointwise"),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], transB=1, name="fc"),
        helper.make_node("Softmax", ["logits"], ["probabilities"], axis=-1, name="softmax"),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="deeploy_core-example")
    onnx.checker.check_model(model, full_check=True)
    return model


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    target = Path(sys.argv[1])
    target.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(tiny_cnn(), target)
    print(f"wrote {target}")
