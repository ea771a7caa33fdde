"""Naming the tensor whose shape stays unknown, and why, before anything downstream trips over it.

After shape arithmetic on constants is folded (:mod:`.shape_folding`), a
tensor without a static shape can only come from two places: a graph input
whose shape is not fixed, or a value computed from the input data (a
``Reshape`` whose target shape is an input, ``NonZero``, …).  The first is
refused before folding, naming the input and the ``--input-shape`` option
that fixes it (``check_static_inputs`` in the importer); the second cannot
be compiled to static memory at all, and is refused here naming the graph
input whose values decide the shape, so the user is not left with a
``[1, 'unk__2', 64]`` and no idea where it came from.
"""

from __future__ import annotations

import onnx

from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.node_label import node_label

Dims = list[int | str]
"""A tensor's dimensions as inference left them: a number, or the name of an unknown dimension."""


def tensor_dims(graph: onnx.GraphProto) -> dict[str, Dims | None]:
    """The dimensions of every tensor the graph types (None: no shape at all); initializers are always static."""
    found: dict[str, Dims | None] = {tensor.name: list(tensor.dims) for tensor in graph.initializer}
    for value in (*graph.input, *graph.value_info, *graph.output):
        if value.name in found or value.type.WhichOneof("value") != "tensor_type":
            continue
        tensor_type = value.type.tensor_type
        if not tensor_type.HasField("shape"):
            found[value.name] = None
            continue
        found[value.name] = [dim.dim_value if dim.HasField("dim_value") else (dim.dim_param or "?")
                             for dim in tensor_type.shape.dim]
    return found


def is_static(dims: Dims | None) -> bool:
    """Every dimension is a number."""
    return dims is not None and all(isinstance(dim, int) for dim in dims)


def _live_nodes(graph: onnx.GraphProto) -> list[int]:
    """Indices of the nodes some graph output depends on (dead ones are removed later and never compiled)."""
    producer = {name: index for index, node in enumerate(graph.node) for name in node.output if name}
    wanted = [value.name for value in graph.output]
    live: set[int] = set()
    while wanted:
        index = producer.get(wanted.pop())
        if index is None or index in live:
            continue
        live.add(index)
        wanted.extend(name for name in graph.node[index].input if name)
    return sorted(live)


def _upstream_inputs(graph: onnx.GraphProto, names: list[str]) -> list[str]:
    """The graph inputs (not initializers) that ``names`` are computed from, in the graph's order."""
    producer = {name: node for node in graph.node for name in node.output if name}
    initializers = {tensor.name for tensor in graph.initializer}
    inputs = [value.name for value in graph.input if value.name not in initializers]
    seen: set[str] = set()
    wanted = list(names)
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        node = producer.get(name)
        if node is not None:
            wanted.extend(item for item in node.input if item)
            for attribute in node.attribute:  # subgraphs read outer tensors by name
                if attribute.type == onnx.AttributeProto.GRAPH:
                    wanted.extend(value for sub in attribute.g.node for value in sub.input if value)
    return [name for name in inputs if name in seen]


def _deciding_inputs(node: onnx.NodeProto) -> list[str]:
    """The inputs that usually decide an op's output shape: all but the data (``Reshape``'s shape, ``Slice``'s ends,
    ``Expand``'s shape, ``Tile``'s repeats), or the only input (``NonZero``, ``ConstantOfShape``)."""
    named = [name for name in node.input if name]
    return named[1:] if len(named) > 1 else named


def check_static_shapes(model: onnx.ModelProto) -> None:
    """Every tensor the outputs depend on and that is computed from a graph input has a static shape.

    Call it once every graph input has a fixed shape.  Tensors computed from
    constants alone are left to lowering, which folds them.  The first tensor
    (in graph order) computed from the inputs without a static shape is
    refused, naming the graph input whose values decide that shape.
    """
    graph = model.graph
    dims = tensor_dims(graph)
    for index in _live_nodes(graph):
        node = graph.node[index]
        for name in node.output:
            if not name or is_static(dims.get(name)):
                continue
            sources = _upstream_inputs(graph, [name])
            if not sources:
                continue
            shown = dims.get(name)
            where = (f"{node_label(node, index)}: tensor {name!r} has no static shape "
                     f"({shown if shown is not None else 'unknown rank'})")
            deciding = _upstream_inputs(graph, _deciding_inputs(node)) or sources
            raise ModelImportError(
                f"{where}: it depends on the values, not only the shapes, of graph input{'s' if len(deciding) > 1 else ''} "
                f"{', '.join(repr(source) for source in deciding)} (every input shape is fixed, and shape arithmetic "
                "on constants is folded), so its size is only known at run time; make the values that decide it "
                "constants of the model")
