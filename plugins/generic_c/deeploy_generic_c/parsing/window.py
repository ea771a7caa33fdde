"""The geometry of sliding-window ops (convolution, pooling), read once for every kernel.

Kernels work on 2-D windows; a 1-D op is the same window with H = KH = OH = 1,
so the lifting and the ONNX padding rules (explicit pads, VALID, SAME_UPPER,
SAME_LOWER resolved against the output size) live here rather than in each
parser.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NodeMismatch, NodeParser


@dataclass(frozen=True)
class Window:
    """A 2-D window over ``[n, c, h, w]`` producing ``[n, m, oh, ow]``."""

    n: int
    c: int
    h: int
    w: int
    m: int
    oh: int
    ow: int
    kh: int
    kw: int
    stride_h: int
    stride_w: int
    pad_top: int
    pad_left: int
    pad_bottom: int
    pad_right: int
    dil_h: int
    dil_w: int

    @property
    def pads(self) -> list[int]:
        return [self.pad_top, self.pad_left, self.pad_bottom, self.pad_right]


def _per_axis(node: gs.Node, name: str, rank: int, default: int) -> list[int]:
    values = NodeParser.attribute(node, name, None)
    return [int(v) for v in values] if values else [default] * rank


def resolve_pads(node: gs.Node, in_spatial, out_spatial, kernel, strides, dilations) -> list[int]:
    """Explicit ``[begin…, end…]`` pads; ``auto_pad`` SAME_* resolved against the output size."""
    rank = len(in_spatial)
    auto_pad = NodeParser.attribute(node, "auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        return [int(p) for p in (NodeParser.attribute(node, "pads", None) or [0] * (2 * rank))]
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    begins, ends = [], []
    for axis in range(rank):
        total = (out_spatial[axis] - 1) * strides[axis] + (kernel[axis] - 1) * dilations[axis] + 1 - in_spatial[axis]
        small, large = max(total, 0) // 2, max(total, 0) - max(total, 0) // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def sliding_window(node: gs.Node, x: Buffer, y: Buffer, kernel: list[int], what: str) -> Window:
    """The window of ``node`` (input ``x``, output ``y``, spatial ``kernel``), 1-D lifted to 2-D."""
    rank = len(x.shape) - 2
    if rank not in (1, 2):
        raise NodeMismatch("shape", f"{rank}-D {what} is not supported (1-D and 2-D are)")
    strides = _per_axis(node, "strides", rank, 1)
    dilations = _per_axis(node, "dilations", rank, 1)
    pads = resolve_pads(node, x.shape[2:], y.shape[2:], kernel, strides, dilations)
    if rank == 1:
        return Window(x.shape[0], x.shape[1], 1, x.shape[2], y.shape[1], 1, y.shape[2], 1, kernel[0],
                      1, strides[0], 0, pads[0], 0, pads[1], 1, dilations[0])
    return Window(x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[1], y.shape[2], y.shape[3], kernel[0],
                  kernel[1], strides[0], strides[1], pads[0], pads[1], pads[2], pads[3], dilations[0], dilations[1])


def convolution_window(node: gs.Node, x: Buffer, w: Buffer, y: Buffer) -> Window:
    """The window of a convolution whose weights ``[M, C/group, kh, kw]`` agree with input and output channels.

    ONNX's shape inference does not compare the weights' input channels with
    the input, so a model can declare weights for 5 channels over a 3-channel
    input; the kernel would then read past its input.
    """
    window = sliding_window(node, x, y, list(w.shape[2:]), "convolution")
    group = int(NodeParser.attribute(node, "group", 1))
    if group < 1 or window.c % group or w.shape[0] % group or w.shape[1] * group != window.c or w.shape[0] != window.m:
        raise NodeMismatch(
            "shape", f"weights {list(w.shape)} with group {group} do not fit input channels {window.c} and "
                     f"output channels {window.m}"
        )
    return window
