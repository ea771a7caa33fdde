"""A SqueezeNet-shaped network of fire modules, quantised by ONNX Runtime, for the fixed-point accuracy tests.

Fire modules (a 1×1 squeeze convolution, then parallel 1×1 and 3×3 expand
convolutions whose outputs are concatenated) chain many requantisations,
each feeding the next: a step of difference anywhere grows on its way
through the following layers, so these networks show whether a compiler's
integer arithmetic matches ONNX Runtime's layer by layer.  Every fire
module's output is also a graph output: a difference is seen where it
arises, before the final average pool averages it away.

The widths are SqueezeNet 1.1's first six fire modules (at a 32×32 input and
with random weights): large enough that a requantisation which disagrees with
ONNX Runtime near half steps shows in 30 inputs (it reached three steps at the
output and four inside), small enough to compile in seconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

POOL = None
"""A 3×3/2 max pool between fire modules (in ``FIRE_MODULES``)."""
FIRE_MODULES: tuple[tuple[int, int] | None, ...] = ((16, 64), (16, 64), POOL, (32, 128), (32, 128), POOL,
                                                     (48, 192), (64, 256))
"""(squeeze channels, expand channels of each branch) per fire module, SqueezeNet 1.1's first six."""
IMAGE = (1, 3, 32, 32)
ACTIVATIONS = ("int8", "uint8")


class _Builder:
    """Nodes and He-initialised weights of one network, from one seeded generator (the same model every run)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []

    def conv_relu(self, name: str, source: str, channels_in: int, channels_out: int, kernel: int, stride: int = 1) -> str:
        std = np.sqrt(2.0 / (channels_in * kernel * kernel))
        shape = (channels_out, channels_in, kernel, kernel)
        self.weights.append(numpy_helper.from_array((self.rng.standard_normal(shape) * std).astype(np.float32), f"{name}_w"))
        self.weights.append(numpy_helper.from_array((self.rng.standard_normal(channels_out) * 0.1).astype(np.float32),
                                                    f"{name}_b"))
        self.nodes.append(helper.make_node("Conv", [source, f"{name}_w", f"{name}_b"], [f"{name}_conv"],
                                           kernel_shape=[kernel] * 2, strides=[stride] * 2, pads=[kernel // 2] * 4))
        self.nodes.append(helper.make_node("Relu", [f"{name}_conv"], [name]))
        return name

    def max_pool(self, name: str, source: str) -> str:
        self.nodes.append(helper.make_node("MaxPool", [source], [name], kernel_shape=[3, 3], strides=[2, 2],
                                           pads=[0, 0, 1, 1]))
        return name


def fire_network(modules: tuple[tuple[int, int] | None, ...] = FIRE_MODULES, classes: int = 10,
                 seed: int = 2) -> onnx.ModelProto:
    """Conv 3×3/2 (64) → max pool → fire modules → 1×1 conv (``classes``) → global average pool → flatten.

    Outputs: ``y`` (the classes), then ``fire<i>`` for every fire module.
    """
    build = _Builder(seed)
    current = build.max_pool("pool0", build.conv_relu("stem", "x", IMAGE[1], 64, 3, stride=2))
    channels, fires = 64, []
    for index, widths in enumerate(modules):
        if widths is None:
            current = build.max_pool(f"pool{index + 1}", current)
            continue
        squeeze, expand = widths
        squeezed = build.conv_relu(f"fire{index}_squeeze", current, channels, squeeze, 1)
        branches = [build.conv_relu(f"fire{index}_expand{k}", squeezed, squeeze, expand, k) for k in (1, 3)]
        build.nodes.append(helper.make_node("Concat", branches, [f"fire{index}"], axis=1))
        current, channels = f"fire{index}", 2 * expand
        fires.append(current)
    build.nodes.append(helper.make_node("GlobalAveragePool", [build.conv_relu("classifier", current, channels, classes, 1)],
                                        ["pooled"]))
    build.nodes.append(helper.make_node("Flatten", ["pooled"], ["y"]))
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, classes])]
    outputs += [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in fires]
    graph = helper.make_graph(build.nodes, "fire", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(IMAGE))],
                              outputs, build.weights)
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def image_inputs(seed: int) -> dict[str, np.ndarray]:
    """A seeded standard-normal image for the network's input ``x``."""
    return {"x": np.random.default_rng(seed).standard_normal(IMAGE).astype(np.float32)}


def quantised_fire_network(folder: Path, per_channel: bool, activations: str) -> Path:
    """The network quantised by ONNX Runtime's ``quantize_static`` (QDQ, int8 weights), calibrated on 8 images.

    uint8 activations come with ``reduce_range`` (7-bit weights): without it
    ONNX Runtime's uint8 × int8 kernels on x86 CPUs without VNNI add pairs of
    products in saturating 16-bit arithmetic, so the reference itself is off
    by tens of steps from the exact sum (ONNX Runtime recommends
    ``reduce_range`` there for that reason).
    """
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Calibration(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([image_inputs(100 + index) for index in range(8)])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.batches, None)

    if activations not in ACTIVATIONS:
        raise ValueError(f"activations must be one of {ACTIVATIONS}, got {activations!r}")
    source = folder / "fire.onnx"
    target = folder / f"fire_{'per_channel' if per_channel else 'per_tensor'}_{activations}.onnx"
    onnx.save(fire_network(), source)
    quantize_static(str(source), str(target), Calibration(), quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    activation_type=QuantType.QInt8 if activations == "int8" else QuantType.QUInt8,
                    weight_type=QuantType.QInt8, reduce_range=activations == "uint8")
    return target
