"""A float-declared graph input that reaches an integer kernel: say which input, and how to type it.

Deeploy's integer networks declare their inputs as float although their
first layers are integer kernels.  Mapping then fails with a type mismatch on
that kernel, which reads as a platform limitation; the real cause is the
input's type, which only the user can give.  This module follows a refused
tensor back to the graph input whose type flows into it and turns the failure
into one line naming the input, the kernel and the two options that fix it.

The walk goes back only through ops that take their output type from their
inputs in the raw integer domain (:data:`OUTPUT_TYPE_RULES`): exactly the ops
through which an integer input type given by the user would reach the kernel.
"""

from __future__ import annotations

import shlex

import onnx_graphsurgeon as gs

from deeploy_core.errors import DeeployError
from deeploy_core.ir import DataType, NetworkContext
from deeploy_core.lowering.integer_types import OUTPUT_TYPE_RULES
from deeploy_core.midend.unsupported import UnsupportedModelError, UnsupportedNode

SAMPLE_OPTION = "--input-types-from SAMPLE.npz"


class FloatInputError(UnsupportedModelError):
    """An integer kernel cannot be mapped because a float-declared graph input feeds it.

    ``input_name`` and ``wanted`` (the integer type the kernel declares, or
    None when any integer type fits) let callers that hold sample data retry
    with integer input types.
    """

    def __init__(self, platform: str, nodes: list[UnsupportedNode], input_name: str, input_type: DataType,
                 node: UnsupportedNode, wanted: DataType | None) -> None:
        self.nodes = nodes
        self.input_name = input_name
        self.input_type = input_type
        self.node = node
        self.wanted = wanted
        suggestion = shlex.quote(f"{input_name}={wanted or 'int8'}")
        hint = "" if wanted else " (uint8 for data in 0…255)"
        DeeployError.__init__(
            self,
            f"input {input_name!r} is {input_type} but feeds node {node.node!r} ({node.op_type}), an integer kernel; "
            f"name its type with --input-type {suggestion}{hint} or take it from sample data with {SAMPLE_OPTION}",
            details=tuple(other.describe() for other in nodes if not _refuses_float(other)),
        )


def explain_failures(platform: str, graph: gs.Graph, ctxt: NetworkContext,
                     failures: list[UnsupportedNode]) -> UnsupportedModelError:
    """:class:`FloatInputError` for the first failure (graph order) whose integer kernel a float input reaches,
    else the plain :class:`UnsupportedModelError` listing every failure."""
    tensors = graph.tensors()
    inputs = {tensor.name for tensor in graph.inputs}
    for failure in failures:
        closest = failure.closest()
        if closest is None:
            continue
        for wanted in closest.wants_integer:
            source = _float_source(tensors.get(wanted.tensor), inputs, ctxt, set())
            if source is not None:
                return FloatInputError(platform, failures, source, ctxt[source].dtype, failure, wanted.dtype)
    return UnsupportedModelError(platform, failures)


def _refuses_float(node: UnsupportedNode) -> bool:
    """Whether the node failed because its integer kernel got a float tensor (usually the same input's doing)."""
    closest = node.closest()
    return closest is not None and bool(closest.wants_integer)


def _float_source(tensor: gs.Tensor | None, inputs: set[str], ctxt: NetworkContext, seen: set[str]) -> str | None:
    """The float-typed graph input whose type flows into ``tensor`` (first found, inputs in node order), or None."""
    if tensor is None or isinstance(tensor, gs.Constant) or tensor.name in seen:
        return None
    seen.add(tensor.name)
    if tensor.name in inputs:
        return tensor.name if ctxt[tensor.name].dtype.is_float else None
    if len(tensor.inputs) != 1 or tensor.inputs[0].op not in OUTPUT_TYPE_RULES:
        return None
    for operand in tensor.inputs[0].inputs:
        source = _float_source(operand, inputs, ctxt, seen)
        if source is not None:
            return source
    return None
