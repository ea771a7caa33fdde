"""Float32 Softmax along any single axis, through the runtime's ``dcg_softmax_f32`` (outer x length x inner rows)."""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes
from deeploy_generic_c.parsing.common import single_axis, single_binding

F32 = dtypes.FLOAT32


class SoftmaxParser(NodeParser):
    """Any single axis."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        axis = single_axis(node, len(x.shape), -1)
        outer, length, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1 :])
        return {"call": f"dcg_softmax_f32({x.c_name}, {y.c_name}, {outer}, {length}, {inner});", "size": y.numel * 3}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    # The checker normalization.py gave Softmax (three float32 outputs declared), kept so the binding is unchanged.
    "Softmax": single_binding(SoftmaxParser(), NodeTypeChecker((F32,), (F32, F32, F32)), "Softmax float32"),
}
