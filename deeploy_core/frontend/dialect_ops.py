"""Operators of Deeploy's integer dialect, which ONNX's tools do not know.

RequantShift, iSoftmax, iLayerNorm, iGELU, ITAMax, … sit in the default domain
(or ``PACTOps``) of QuantLib exports; the checker, the version converter and
shape inference reject them.  Every one of them keeps the shape of its first
input, so while onnx's tools run each is replaced by an ``Identity`` of that
input (same output name), and restored afterwards in the default domain.
"""

from __future__ import annotations

import onnx
import onnx.helper

from deeploy_core.frontend.custom_ops import DECLARED_DOMAIN

SHAPE_PRESERVING_DIALECT_OPS = frozenset(
    {"RequantShift", "iSoftmax", "ITAMax", "ITAPartialMax", "iLayerNorm", "iGELU", "RequantizediGELU", "IntegerDiv",
     "RQIntegerDiv", "iRMSNorm", "iHardswish", "RequantizediHardswish", "iNoNorm"}
)


def proxy_dialect_ops(model: onnx.ModelProto) -> dict[str, onnx.NodeProto]:
    """Replace dialect nodes by shape-preserving proxies; returns the originals keyed by their first output.

    The proxy is an ``Identity``, or a ``Cast`` to the declared type when the
    output is a graph output whose declared element type must still check.
    """
    declared = {value.name: value.type.tensor_type.elem_type for value in model.graph.output}
    originals: dict[str, onnx.NodeProto] = {}
    for node in model.graph.node:
        if node.op_type not in SHAPE_PRESERVING_DIALECT_OPS or not node.output or node.domain == DECLARED_DOMAIN:
            continue
        original = onnx.NodeProto()
        original.CopyFrom(node)
        original.domain = ""
        originals[node.output[0]] = original
        first_input = node.input[0]
        del node.input[:]
        node.input.append(first_input)
        del node.output[1:]
        del node.attribute[:]
        node.op_type, node.domain = "Identity", ""
        if declared.get(node.output[0]):
            node.op_type = "Cast"
            node.attribute.append(onnx.helper.make_attribute("to", declared[node.output[0]]))
    return originals


def restore_dialect_ops(model: onnx.ModelProto, originals: dict[str, onnx.NodeProto]) -> None:
    """Put the dialect nodes back in place of their proxies."""
    if not originals:
        return
    for node in model.graph.node:
        if node.op_type in ("Identity", "Cast") and node.output and node.output[0] in originals:
            node.CopyFrom(originals[node.output[0]])
