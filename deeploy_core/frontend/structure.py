"""The graph's wiring, checked before onnx's checker so that every fault names the node, its op and the tensor.

onnx's checker finds the same faults but reports them without the op (and
often without the node); these checks run first and keep the checker as the
authority for everything else.
"""

from __future__ import annotations

import graphlib

import onnx

from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.input_shapes import input_shape_hint
from deeploy_core.frontend.node_label import node_label


def check_interface(graph: onnx.GraphProto) -> None:
    """The graph has outputs, and every graph input and output is a tensor with a declared shape."""
    if not graph.output:
        raise ModelImportError("the graph has no outputs: there is nothing to compute")
    initializers = {tensor.name for tensor in graph.initializer}
    for kind, values in (("input", graph.input), ("output", graph.output)):
        for value in values:
            if kind == "input" and value.name in initializers:
                continue
            which = value.type.WhichOneof("value")
            if which is None:
                raise ModelImportError(f"graph {kind} {value.name!r} declares no type")
            if which != "tensor_type":
                raise ModelImportError(f"graph {kind} {value.name!r} is a {which.removesuffix('_type')}: only tensor {kind}s are supported")
            if not value.type.tensor_type.HasField("shape"):
                hint = f": give one with {input_shape_hint(value.name)}" if kind == "input" else ""
                raise ModelImportError(f"graph {kind} {value.name!r} has no shape (ONNX requires one on graph {kind}s){hint}")


def check_single_assignment(graph: onnx.GraphProto) -> None:
    """Every tensor has one source: a graph input, an initializer, or the output of one node."""
    sources: dict[str, str] = {}
    for tensor in graph.initializer:
        if tensor.name in sources:
            raise ModelImportError(f"initializer {tensor.name!r} is defined twice")
        sources[tensor.name] = "an initializer"
    for value in graph.input:
        sources.setdefault(value.name, "a graph input")
    for index, node in enumerate(graph.node):
        for output in node.output:
            if not output:
                continue
            if output in sources:
                raise ModelImportError(f"{node_label(node, index)}: output {output!r} is already {sources[output]}")
            sources[output] = node_label(node, index).replace("node", "written by node", 1)


def check_inputs_defined(graph: onnx.GraphProto) -> None:
    """Every node input is a graph input, an initializer or some node's output (optional inputs may be empty)."""
    defined = {tensor.name for tensor in graph.initializer} | {value.name for value in graph.input}
    defined |= {output for node in graph.node for output in node.output}
    for index, node in enumerate(graph.node):
        for position, name in enumerate(node.input):
            if name and name not in defined:
                raise ModelImportError(
                    f"{node_label(node, index)}: input {position} {name!r} is not a graph input, an initializer "
                    "or the output of any node"
                )


def check_acyclic(graph: onnx.GraphProto) -> None:
    """The nodes form no cycle; the message walks the cycle node by node."""
    producer = {output: index for index, node in enumerate(graph.node) for output in node.output if output}
    sorter: graphlib.TopologicalSorter[int] = graphlib.TopologicalSorter()
    for index, node in enumerate(graph.node):
        sorter.add(index, *sorted({producer[name] for name in node.input if name in producer}))
    try:
        sorter.prepare()
    except graphlib.CycleError as error:
        cycle = error.args[1]
        walk = " → ".join(node_label(graph.node[index], index) for index in cycle)
        raise ModelImportError(f"the graph is cyclic: {walk}") from None


def check_structure(model: onnx.ModelProto) -> None:
    """All structural checks, cheapest first."""
    graph = model.graph
    check_interface(graph)
    check_single_assignment(graph)
    check_inputs_defined(graph)
    check_acyclic(graph)
