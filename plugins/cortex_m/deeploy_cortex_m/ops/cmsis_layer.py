"""What the CMSIS-NN layer parsers share: NHWC geometry, the output clamp, the C call's scaffolding.

The channels-last nodes (:mod:`deeploy_cortex_m.layout`) carry their ONNX
node's attributes (pads, strides, dilations, ``output_min``/``output_max``)
and read NHWC tensors, so the parsers read the geometry off the tensors'
shapes and the window off the attributes.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker

HEADERS = ("stdint.h", "arm_nnfunctions.h")
TEMPLATE = NodeTemplate(
    "{\n% if scratch_bytes:\nvoid *const cm_scratch = (void *)(${scratch});\n% else:\nvoid *const cm_scratch = NULL;\n"
    "% endif\n${code}\n}", headers=HEADERS, transients=lambda rep: {"scratch": int(rep["scratch_bytes"])})
"""Inline code in a block where ``cm_scratch`` points at the ``scratch_bytes`` the layer asked of the arena
(the parsers set ``scratch`` to ``NULL``; the core replaces it with the buffer's C name when it hands one out)."""

def any_types(arity: int) -> NodeTypeChecker:
    """The parsers check element types themselves (int8 activations, int32 bias)."""
    return NodeTypeChecker((None,) * arity, (None,))


@dataclass(frozen=True)
class Window:
    """A 2-D window over NHWC tensors, in CMSIS-NN's terms (padding = top/left; bottom/right follow from the output)."""

    n: int
    h: int
    w: int
    c: int
    oh: int
    ow: int
    oc: int
    kh: int
    kw: int
    stride: tuple[int, int]
    """(h, w)"""
    pad: tuple[int, int]
    """(top, left)"""
    dilation: tuple[int, int]


def window(node: gs.Node, x: Buffer, y: Buffer, kernel: tuple[int, int]) -> Window:
    """The window of ``node`` reading NHWC ``x`` into NHWC ``y``."""
    if len(x.shape) != 4 or len(y.shape) != 4:
        raise NodeMismatch("shape", "CMSIS-NN's layers read and write 4-D NHWC tensors")
    pads = [int(p) for p in NodeParser.attribute(node, "pads", [0, 0, 0, 0])]
    strides = [int(s) for s in NodeParser.attribute(node, "strides", [1, 1])]
    dilations = [int(d) for d in NodeParser.attribute(node, "dilations", [1, 1])]
    n, h, w, c = (int(d) for d in x.shape)
    _, oh, ow, oc = (int(d) for d in y.shape)
    return Window(n, h, w, c, oh, ow, oc, kernel[0], kernel[1], (strides[0], strides[1]), (pads[0], pads[1]),
                  (dilations[0], dilations[1]))


def dims(name: str, n: int, h: int, w: int, c: int) -> str:
    """A ``cmsis_nn_dims`` declaration."""
    return f"const cmsis_nn_dims {name} = {{.n = {n}, .h = {h}, .w = {w}, .c = {c}}};"


def tile(h: int, w: int) -> str:
    return f"{{.w = {w}, .h = {h}}}"


def context(scratch_bytes: int) -> str:
    """The ``cmsis_nn_context`` of a layer: the arena's scratch when it asked for some, else none."""
    return f"const cmsis_nn_context cm_ctx = {{.buf = cm_scratch, .size = {scratch_bytes}}};"
