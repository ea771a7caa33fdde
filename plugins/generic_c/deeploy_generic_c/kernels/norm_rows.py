"""The C of normalisations over the trailing axes ``[axis, rank)`` (LayerNormalization, RMSNormalization): one
row per position of the leading axes, statistics in double, scale and bias per element of the row (or one
value for the whole row)."""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NetworkContext, NodeMismatch, NodeParser
from deeploy_generic_c.parsing.common import c_float
from deeploy_generic_c.kernels.strided import normalise_axis


def rows_and_length(node: gs.Node, x: Buffer) -> tuple[int, int]:
    """(rows, row length) of a normalisation over ``[axis, rank)`` (``axis`` default -1)."""
    shape = tuple(int(d) for d in x.shape)
    if not shape:
        raise NodeMismatch("shape", "the input is a scalar: there is no axis to normalise")
    axis = normalise_axis(int(NodeParser.attribute(node, "axis", -1)), len(shape))
    return math.prod(shape[:axis]), math.prod(shape[axis:])


def per_element(node: gs.Node, ctxt: NetworkContext, index: int, length: int, what: str) -> str | None:
    """``name[j]`` (one value per row element) or ``name[0]`` (one for all) of optional input ``index``."""
    if not NodeParser.is_present(node, index):
        return None
    buffer = ctxt[node.inputs[index].name]
    if buffer.numel not in (length, 1):
        raise NodeMismatch("shape", f"{what} has {buffer.numel} elements, the normalised rows have {length}")
    if buffer.dtype != ctxt[node.inputs[0].name].dtype:
        raise NodeMismatch("dtype", f"{what} is {buffer.dtype}, the input is {ctxt[node.inputs[0].name].dtype}")
    return f"(({buffer.dtype.c_type} const *){buffer.c_name})[{'j' if buffer.numel == length else '0'}]"


def epsilon(node: gs.Node) -> str:
    """The ``epsilon`` attribute as a double literal (ONNX's default 1e-5)."""
    value = float(NodeParser.attribute(node, "epsilon", 1e-5))
    return c_float(value).removesuffix("f")
