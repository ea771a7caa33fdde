"""Which ONNX layers CMSIS-NN runs channels last, and the node each becomes.

CMSIS-NN reads NHWC activations and OHWI weights (depthwise: ``[1, KH, KW,
C·mult]``).  A layer qualifies only when the CMSIS-NN kernel computes exactly
what the ONNX node promises: 2-D, int8 in and out, explicit pads, and for
QLinearConv TFLite's fixed-point requantisation (``requantization="tflite"``,
the double rounding of ``arm_nn_requantize``) with symmetric weights (CMSIS-NN
has no weight offset), a per-tensor input zero point and an int32 bias.  Every
other layer is left to generic C unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx_graphsurgeon as gs

CONV = "CmsisConv"
DEPTHWISE = "CmsisDepthwiseConv"
AVERAGE_POOL = "CmsisAveragePool"
MAX_POOL = "CmsisMaxPool"
CHANNELS_LAST_OPS = (CONV, DEPTHWISE, AVERAGE_POOL, MAX_POOL)
"""The op types of the channels-last nodes (no ONNX schema: the pass types their tensors itself)."""
MICROSOFT = "com.microsoft"


@dataclass(frozen=True)
class Rewrite:
    """A qualifying node: its channels-last op type and weight permutation (None: no weights)."""

    op: str
    weight_perm: tuple[int, ...] | None = None


def _constant(tensor: gs.Tensor) -> np.ndarray | None:
    return np.asarray(tensor.values) if isinstance(tensor, gs.Constant) else None


def _int8(tensor: gs.Tensor) -> bool:
    return tensor.dtype is not None and np.dtype(tensor.dtype) == np.int8 and tensor.shape is not None \
        and len(tensor.shape) == 4 and all(isinstance(d, int) for d in tensor.shape)


def _window_ok(node: gs.Node) -> bool:
    """Explicit (or no) padding, 2-D, no ceil mode: CMSIS-NN's window is top/left padding plus output size."""
    attrs = node.attrs
    if attrs.get("auto_pad", "NOTSET") not in ("NOTSET", b"NOTSET", "VALID", b"VALID"):
        return False
    if int(attrs.get("ceil_mode", 0)) or len(attrs.get("kernel_shape", [1, 1])) != 2:
        return False
    pads = list(attrs.get("pads", [0, 0, 0, 0]))
    return len(pads) == 4 and min(pads) >= 0


def _scalar(tensor: gs.Tensor) -> bool:
    values = _constant(tensor)
    return values is not None and values.size == 1


def conv_rewrite(node: gs.Node) -> Rewrite | None:
    """QLinearConv -> CmsisConv (group 1) or CmsisDepthwiseConv (group = C), else None."""
    if len(node.inputs) < 8 or node.attrs.get("requantization") not in ("tflite", b"tflite"):
        return None
    x, w, y = node.inputs[0], node.inputs[3], node.outputs[0]
    weights, w_zero, w_scale = _constant(w), _constant(node.inputs[5]), _constant(node.inputs[4])
    if not (_int8(x) and _int8(y) and weights is not None and weights.dtype == np.int8 and weights.ndim == 4):
        return None
    if w_zero is None or np.any(w_zero) or w_scale is None or w_scale.size not in (1, weights.shape[0]):
        return None
    if not all(_scalar(node.inputs[i]) for i in (1, 2, 6, 7)):
        return None
    if len(node.inputs) > 8 and node.inputs[8].name:
        bias = _constant(node.inputs[8])
        if bias is None or bias.dtype != np.int32:
            return None
    if not _window_ok(node):
        return None
    if weights.shape[2:] == (1, 1) and any(int(p) for p in node.attrs.get("pads", [])):
        return None  # CMSIS-NN's 1x1 kernels assume no padding at all (their output is the strided input)
    channels, outputs, group = int(x.shape[1]), int(weights.shape[0]), int(node.attrs.get("group", 1))
    if group == 1:
        return Rewrite(CONV, (0, 2, 3, 1))
    if group == channels and weights.shape[1] == 1 and outputs % channels == 0:
        return Rewrite(DEPTHWISE, (1, 2, 3, 0))
    return None


def pool_rewrite(node: gs.Node) -> Rewrite | None:
    """com.microsoft QLinearAveragePool in TFLite's arithmetic, or int8 MaxPool; else None."""
    if node.op == "MaxPool" and (node.domain or "") in ("", "ai.onnx"):
        if len(node.outputs) != 1 or int(node.attrs.get("storage_order", 0)):
            return None
        if any(int(d) != 1 for d in node.attrs.get("dilations", [1, 1])):
            return None
        return Rewrite(MAX_POOL) if _int8(node.inputs[0]) and _int8(node.outputs[0]) and _window_ok(node) else None
    if node.op != "QLinearAveragePool" or node.domain != MICROSOFT:
        return None
    if node.attrs.get("requantization") not in ("tflite", b"tflite") or int(node.attrs.get("channels_last", 0)):
        return None
    if int(node.attrs.get("count_include_pad", 0)) and any(int(p) for p in node.attrs.get("pads", [0] * 4)):
        return None
    x, y = node.inputs[0], node.outputs[0]
    if not (_int8(x) and _int8(y) and all(_scalar(node.inputs[i]) for i in (1, 2, 3, 4)) and _window_ok(node)):
        return None
    scale_in, scale_out = _constant(node.inputs[1]), _constant(node.inputs[3])
    zero_in, zero_out = _constant(node.inputs[2]), _constant(node.inputs[4])
    assert scale_in is not None and scale_out is not None and zero_in is not None and zero_out is not None
    same = np.float32(scale_in.reshape(-1)[0]) == np.float32(scale_out.reshape(-1)[0]) \
        and int(zero_in.reshape(-1)[0]) == int(zero_out.reshape(-1)[0])
    return Rewrite(AVERAGE_POOL) if same else None


def rewrite_for(node: gs.Node) -> Rewrite | None:
    """The channels-last rewrite of ``node``, or None when CMSIS-NN cannot run it exactly."""
    if node.op == "QLinearConv":
        return conv_rewrite(node)
    return pool_rewrite(node)
