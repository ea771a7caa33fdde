"""DepthToSpace (DCR and CRD) and SpaceToDepth (DCR and CRD) for every element type.

Both are ONNX's reshape -> transpose -> reshape on an NCHW tensor, so they are
one transpose of the 6-D reshaped view, written by :mod:`.basic`'s
:func:`transpose_loop` (which also merges the axes that stay together).
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation,
)
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.indexing import require_same_type
from deeploy_generic_c.ops.movement.basic import transpose_loop


def _mode(node: gs.Node) -> str:
    mode = str(NodeParser.attribute(node, "mode", "DCR"))
    if mode not in ("DCR", "CRD"):
        raise NodeMismatch("attribute", f"mode={mode!r} is not supported (DCR or CRD)")
    return mode


def _block_size(node: gs.Node) -> int:
    size = int(NodeParser.attribute(node, "blocksize", 0))
    if size < 1:
        raise NodeMismatch("attribute", f"blocksize={size} must be at least 1")
    return size


class DepthToSpaceParser(NodeParser):
    """``[N, C, H, W] -> [N, C / b², H b, W b]``."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        b, mode = _block_size(node), _mode(node)
        if len(x.shape) != 4 or x.shape[1] % (b * b):
            raise NodeMismatch("shape", f"input {list(x.shape)} is not NCHW with C divisible by blocksize² = {b * b}")
        n, c, h, w = x.shape
        if mode == "DCR":
            shape, perm = [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2]
        else:
            shape, perm = [n, c // (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3]
        return {"call": transpose_loop(x.c_name, y.c_name, x.dtype.c_type, shape, perm), "size": 0}


class SpaceToDepthParser(NodeParser):
    """``[N, C, H, W] -> [N, C b², H / b, W / b]``."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        b, mode = _block_size(node), _mode(node)
        if len(x.shape) != 4 or x.shape[2] % b or x.shape[3] % b:
            raise NodeMismatch("shape", f"input {list(x.shape)} is not NCHW with H and W divisible by blocksize {b}")
        n, c, h, w = x.shape
        shape = [n, c, h // b, b, w // b, b]
        perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
        return {"call": transpose_loop(x.c_name, y.c_name, x.dtype.c_type, shape, perm), "size": 0}


_CHECKER = NodeTypeChecker((None,), (None,))
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "DepthToSpace": single_binding(DepthToSpaceParser(), _CHECKER, "DepthToSpace any type"),
    "SpaceToDepth": single_binding(SpaceToDepthParser(), _CHECKER, "SpaceToDepth any type"),
}
NODE_TESTED = ("DepthToSpace", "SpaceToDepth")
