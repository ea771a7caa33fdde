"""The lowering pass that expands ops without a kernel into their ONNX function bodies.

The expansion itself works on an ``onnx.ModelProto`` (:mod:`.function_expansion`,
using onnx's inliner), so the pass exports the graph, expands, shapes the new
tensors with onnx's inference (folding constant shape arithmetic when inference
alone leaves shapes open, as the importer does) and puts the result back into
the same ``gs.Graph`` object the pipeline holds.  Graphs with nothing to expand
are not touched (no export, no inference).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import onnx
import onnx_graphsurgeon as gs
from onnx import shape_inference

from deeploy_core.errors import DeeployError
from deeploy_core.frontend.shape_folding import fold_shape_arithmetic
from deeploy_core.lowering.function_expansion import expand_functions, unmapped_keys
from deeploy_core.frontend.scan_unroll import unroll_scans
from deeploy_core.lowering.static_shape_values import fold_static_shape_values
from deeploy_core.passes import Modifies, Pass


def _opset(graph: gs.Graph) -> int:
    return int(graph.opset) if graph.opset else 0


def _shaped(model: onnx.ModelProto) -> onnx.ModelProto:
    """Lenient inference with data propagation: schema-less ops keep the shapes the graph already carries."""
    try:
        return shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    except Exception as error:  # noqa: BLE001 - inference raises InferenceError and RuntimeError texts
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DeeployError(f"shape inference failed after expanding ONNX function bodies: {text}") from None


def _replace_contents(graph: gs.Graph, new: gs.Graph) -> None:
    """Make ``graph`` (the object the pipeline holds) the expanded graph."""
    graph.nodes = new.nodes
    graph.inputs = new.inputs
    graph.outputs = new.outputs


class ExpandUnmappedFunctions(Pass[gs.Graph]):
    """Expand every node whose op no mapper of the platform takes and that has an ONNX function body.

    ``mapped`` holds the op keys the platform and its operator plugins map.
    Returns one line per expanded node (for the report), or None.
    """

    def __init__(self, mapped: Collection[str]) -> None:
        super().__init__()
        self.mapped = frozenset(mapped)

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> tuple[str, ...] | None:
        opset = _opset(graph)
        if not opset or not unmapped_keys(graph, self.mapped, opset):
            return None
        model = gs.export_onnx(graph, do_type_check=False)
        expanded = expand_functions(model, self.mapped)
        if not expanded:
            return None
        model = _shaped(model)
        if unroll_scans(model, opset):  # LinearAttention's body is a Scan
            model = _shaped(model)
        while fold_static_shape_values(model):  # before graphsurgeon's folding, which ignores Shape's start/end
            model = _shaped(model)
        if fold_shape_arithmetic(model):
            model = _shaped(model)
        _replace_contents(graph, gs.import_onnx(model))
        graph.toposort()
        return tuple(item.describe() for item in expanded)
