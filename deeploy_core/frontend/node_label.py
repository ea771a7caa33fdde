"""How error messages name a node: by its name (quoted, escaped) or position, and its op with domain."""

from __future__ import annotations

import onnx


def op_label(node: onnx.NodeProto) -> str:
    """``Conv``, or ``com.example.MagicGelu`` for an op outside the default domain."""
    if node.domain in ("", "ai.onnx"):
        return node.op_type
    return f"{node.domain}.{node.op_type}"


def node_label(node: onnx.NodeProto, index: int) -> str:
    """``node 'conv1' (Conv)``; an unnamed node is named by its position, ``node #3 (Relu)``.

    Names are shown with ``repr`` so that a name holding quotes, newlines or
    control characters cannot break the one-line error or be mistaken for text.
    """
    name = repr(node.name) if node.name else f"#{index}"
    return f"node {name} ({op_label(node)})"
