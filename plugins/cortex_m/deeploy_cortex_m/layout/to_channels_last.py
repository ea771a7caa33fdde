"""The pass that puts each layer CMSIS-NN can run into its layout: NHWC activations, OHWI weights.

Each qualifying node (:mod:`.layers`) is replaced by its channels-last node
between two Transposes: ``x -> T(NCHW->NHWC) -> Cmsis* -> T(NHWC->NCHW) -> y``.
The weights are transposed here, at compile time, into a new constant.  On its
own this adds two copies per layer; :mod:`.cancel_transposes` then removes the
pairs that meet, so a chain of such layers runs NHWC end to end.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Modifies, Pass

from deeploy_cortex_m.layout.graph_edits import TO_NCHW, TO_NHWC, fresh, permuted, transpose
from deeploy_cortex_m.layout.layers import Rewrite, rewrite_for


def to_channels_last(graph: gs.Graph, node: gs.Node, rewrite: Rewrite,
                     transposed: dict[tuple[str, tuple[int, ...]], gs.Constant] | None = None) -> gs.Node:
    """Replace ``node`` by its channels-last node between transposes; return the new node.

    ``transposed`` remembers the weights already permuted, so layers sharing a weight tensor share the new one.
    """
    transposed = {} if transposed is None else transposed
    x, y = node.inputs[0], node.outputs[0]
    x_nhwc = transpose(graph, x, TO_NHWC)
    y_nhwc = fresh(graph, y.name, y.dtype, permuted(y.shape, TO_NHWC))
    inputs = [x_nhwc, *node.inputs[1:]]
    if rewrite.weight_perm is not None:
        weights = node.inputs[3]
        assert isinstance(weights, gs.Constant)
        key = (weights.name, rewrite.weight_perm)
        if key not in transposed:
            values = np.ascontiguousarray(np.transpose(np.asarray(weights.values), rewrite.weight_perm))
            suffix = "ohwi" if rewrite.weight_perm[0] == 0 else "1hwc"
            transposed[key] = gs.Constant(fresh(graph, f"{weights.name}_{suffix}", weights.dtype, []).name, values)
        inputs[3] = transposed[key]
    attrs = {key: value for key, value in node.attrs.items()}
    layer = gs.Node(rewrite.op, name=f"{node.name}_cmsis", attrs=attrs, inputs=inputs, outputs=[y_nhwc])
    node.inputs.clear()
    node.outputs.clear()
    graph.nodes.append(layer)
    transpose(graph, y_nhwc, TO_NCHW, target=y)
    return layer


class ChannelsLastLayers(Pass[gs.Graph]):
    """Rewrite every int8 Conv/depthwise Conv/average pool/max pool CMSIS-NN runs exactly into channels last."""

    def modifies(self) -> Modifies:
        return Modifies.Everything

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int:
        count = 0
        transposed: dict[tuple[str, tuple[int, ...]], gs.Constant] = {}
        for node in list(graph.nodes):
            rewrite = rewrite_for(node)
            if rewrite is not None:
                to_channels_last(graph, node, rewrite, transposed)
                count += 1
        if count:
            graph.cleanup(remove_unused_graph_inputs=False).toposort()
        return count

    def report(self, result: Any) -> str | None:
        return f"{result} layer(s) channels last for CMSIS-NN" if result else None
