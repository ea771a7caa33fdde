"""Reductions over any set of axes (float32)."""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    FLOAT32,
    INT64,
    NetworkContext,
    NodeMapper,
    NodeMismatch,
    NodeParser,
    NodeTypeChecker,
    OperatorRepresentation,
    attribute,
    is_present,
)
from deeploy_generic_c.ops._common import MAX_DIMS, int_array, single_binding


class ReduceParser(NodeParser):
    """Axes as a constant input (opset >= 18) or attribute; keepdims 0/1; noop_with_empty_axes."""

    inputs = (1, 2)

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        rank = len(x.shape)
        if rank > MAX_DIMS:
            raise NodeMismatch("shape", f"rank {rank} exceeds {MAX_DIMS}")
        axes: list[int] | None = None
        if is_present(node, 1):
            values = ctxt[node.inputs[1].name].values
            if values is None:
                raise NodeMismatch("shape", "axes must be a constant")
            axes = [int(a) for a in values.reshape(-1)]
        elif attribute(node, "axes", None) is not None:
            axes = [int(a) for a in attribute(node, "axes")]
        if not axes:
            if int(attribute(node, "noop_with_empty_axes", 0)):
                return {"call": f"dcg_copy({x.c_name}, {y.c_name}, {x.size_bytes});", "size": 0}
            axes = list(range(rank))
        mask = [0] * max(rank, 1)
        for axis in axes:
            if not -rank <= axis < rank:
                raise NodeMismatch("attribute", f"axis {axis} is out of range for rank {rank}")
            mask[axis % rank] = 1 if x.shape[axis % rank] != 1 else 0  # a reduction over one element is a copy
        if not any(mask):
            return {"call": f"dcg_copy({x.c_name}, {y.c_name}, {x.size_bytes});", "size": 0}
        shape = list(x.shape) or [1]
        return {
            "call": f"dcg_{self.kernel}_f32({x.c_name}, {y.c_name}, {len(shape)}, {int_array(shape)}, {int_array(mask)});",
            "size": x.numel,
        }


FLOAT = NodeTypeChecker((FLOAT32, INT64), (FLOAT32,))
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    op: single_binding(ReduceParser(kernel), FLOAT, f"{op} float32")
    for op, kernel in (("ReduceMean", "reduce_mean"), ("ReduceSum", "reduce_sum"), ("ReduceMax", "reduce_max"), ("ReduceMin", "reduce_min"))
}
