"""What the CMSIS-NN parsers of fully connected, element-wise and softmax layers share.

CMSIS-NN computes TFLite's int8 arithmetic (TensorFlow Lite Micro calls it on
Cortex-M), so these kernels serve the nodes ``--quantization fixed-point``
marks ``requantization="tflite"`` only; every other node (QOperator files,
exact mode, float) raises :class:`NodeMismatch` and falls through to generic
C.  Operands are read here, not through generic C (a plugin imports the core's
plugin API only), with the same refusals: constant per-tensor scales and zero
points, int8 tensors.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, KernelRuntime, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate,
    NodeTypeChecker,
)

from deeploy_cortex_m.cmsis_nn import cmsis_nn

HEADERS = ("stdint.h", "stddef.h", "arm_nnfunctions.h")
"""The headers of a layer calling CMSIS-NN (``NULL`` for an absent bias or buffer)."""
TFLITE = "tflite"
"""The ``requantization`` attribute of fixed-point mode's nodes: TFLite's arithmetic, CMSIS-NN's."""


def require_tflite(node: gs.Node) -> None:
    """Serve fixed-point mode's nodes only: CMSIS-NN rounds as TFLite does, not as ONNX Runtime does."""
    mode = NodeParser.attribute(node, "requantization", None)
    if mode != TFLITE:
        raise NodeMismatch("attribute", f"requantization={mode!r}; CMSIS-NN computes TFLite's arithmetic "
                                        "(--quantization fixed-point) only")


def int8(*buffers: Buffer) -> None:
    """CMSIS-NN's s8 kernels read and write int8 only."""
    for buffer in buffers:
        if buffer.dtype.numpy != np.int8:
            raise NodeMismatch("dtype", f"{buffer.name} is {buffer.dtype}; the CMSIS-NN s8 kernel takes int8")


def constant(ctxt: NetworkContext, node: gs.Node, index: int, what: str) -> np.ndarray:
    """The flattened values of constant input ``index`` (a run-time tensor is a mismatch naming ``what``)."""
    values = ctxt[node.inputs[index].name].values
    if values is None:
        raise NodeMismatch("shape", f"{what} must be a constant")
    return np.asarray(values).reshape(-1)


def quantised(ctxt: NetworkContext, node: gs.Node, first: int) -> tuple[Buffer, np.ndarray, np.ndarray]:
    """(tensor, scales, zero points) of the operand at input ``first`` (a missing zero point is 0)."""
    tensor = ctxt[node.inputs[first].name]
    scale = constant(ctxt, node, first + 1, f"input {first + 1} (scale)").astype(np.float64)
    zero = (constant(ctxt, node, first + 2, f"input {first + 2} (zero point)").astype(np.int64)
            if NodeParser.is_present(node, first + 2) else np.zeros(1, np.int64))
    return tensor, scale, zero


def scalar(ctxt: NetworkContext, node: gs.Node, index: int, what: str) -> float:
    """The one value of constant input ``index`` (a per-channel tensor is a mismatch naming ``what``)."""
    values = constant(ctxt, node, index, what)
    if values.size != 1:
        raise NodeMismatch("shape", f"{what} must be per tensor")
    return float(values[0])


def per_tensor(scale: np.ndarray, zero: np.ndarray, what: str) -> tuple[float, int]:
    """A per-tensor (scale, zero point)."""
    if scale.size != 1 or zero.size != 1:
        raise NodeMismatch("shape", f"{what} must be quantised per tensor")
    return float(scale[0]), int(zero[0])


def output(ctxt: NetworkContext, node: gs.Node, scale_index: int) -> tuple[Buffer, float, int]:
    """(tensor, scale, zero point) of the per-tensor output whose scale is input ``scale_index``."""
    y = ctxt[node.outputs[0].name]
    scale = constant(ctxt, node, scale_index, "the output scale").astype(np.float64)
    zero = (constant(ctxt, node, scale_index + 1, "the output zero point").astype(np.int64)
            if NodeParser.is_present(node, scale_index + 1) else np.zeros(1, np.int64))
    return (y, *per_tensor(scale, zero, "the output"))


def activation_range(node: gs.Node) -> tuple[int, int]:
    """int8's range narrowed by ``output_min``/``output_max`` (a fused Relu/Relu6/Clip), CMSIS-NN's activation."""
    low = max(-128, int(NodeParser.attribute(node, "output_min", -128)))
    high = min(127, int(NodeParser.attribute(node, "output_max", 127)))
    if low > high:
        raise NodeMismatch("attribute", f"output_min {low} exceeds output_max {high}: the fused activation is empty")
    return low, high


def int_table(name: str, values: list[int]) -> str:
    """A block-scope ``static const int32_t`` table: in flash, read by CMSIS-NN through a cast-away const."""
    return f"static const int32_t {name}[{len(values)}] = {{{', '.join(str(int(v)) for v in values)}}};"


def cmsis_mapper(parser: NodeParser, arity: int, name: str, sources: tuple[str, ...],
                 defines: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> NodeMapper:
    """One mapper whose code (key ``code``) calls CMSIS-NN, declaring the CMSIS-NN ``sources`` it reaches.

    The parser checks types itself (a mismatch names the tensor), so the checker takes any.
    """
    binding = NodeBinding(NodeTypeChecker((None,) * arity, (None,)), NodeTemplate("${code}", headers=HEADERS))
    return NodeMapper(parser, (binding,), name=name,
                      runtime=KernelRuntime(external=(cmsis_nn(sources=sources, defines=defines),)))
