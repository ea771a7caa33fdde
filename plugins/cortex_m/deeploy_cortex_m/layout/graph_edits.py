"""Small onnx_graphsurgeon edits the layout passes share: new tensors, transposes, rewiring a tensor's readers.

Lowering runs after the core's type inference, so every tensor a pass creates
carries its element type and shape itself (the context is built from them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx_graphsurgeon as gs

TO_NHWC = (0, 2, 3, 1)
"""NCHW -> NHWC: what CMSIS-NN's layers read."""
TO_NCHW = (0, 3, 1, 2)
"""NHWC -> NCHW: back to ONNX's layout after a channels-last layer."""


def permuted(shape: Sequence[int], perm: Sequence[int]) -> list[int]:
    """``shape`` after ``Transpose(perm)``."""
    return [int(shape[axis]) for axis in perm]


def fresh(graph: gs.Graph, base: str, dtype: np.dtype, shape: Sequence[int]) -> gs.Variable:
    """A new, uniquely named tensor of ``dtype`` and ``shape``."""
    names = set(graph.tensors())
    name, index = f"{base}_nhwc", 0
    while name in names:
        index += 1
        name = f"{base}_nhwc{index}"
    return gs.Variable(name, dtype=dtype, shape=list(shape))


def transpose(graph: gs.Graph, source: gs.Variable, perm: Sequence[int], target: gs.Variable | None = None,
              ) -> gs.Variable:
    """Append ``target = Transpose(source, perm)`` (a fresh target when none is given); return the target."""
    if target is None:
        target = fresh(graph, source.name, source.dtype, permuted(source.shape, perm))
    graph.nodes.append(gs.Node("Transpose", name=f"{target.name}_transpose", attrs={"perm": list(perm)},
                               inputs=[source], outputs=[target]))
    return target


def reshape(graph: gs.Graph, source: gs.Variable, target: gs.Variable) -> None:
    """Append ``target = Reshape(source, target.shape)`` (an alias in the generated C: no copy)."""
    shape = gs.Constant(f"{target.name}_shape", np.asarray(target.shape, np.int64))
    graph.nodes.append(gs.Node("Reshape", name=f"{target.name}_reshape", inputs=[source, shape], outputs=[target]))


def consumers(graph: gs.Graph, tensor: gs.Tensor) -> list[gs.Node]:
    """The nodes of ``graph`` that read ``tensor``."""
    return [node for node in graph.nodes if any(inp is tensor for inp in node.inputs)]


def producer(tensor: gs.Tensor) -> gs.Node | None:
    """The node writing ``tensor`` (None for graph inputs and constants)."""
    return tensor.inputs[0] if tensor.inputs else None


def is_graph_output(graph: gs.Graph, tensor: gs.Tensor) -> bool:
    return any(out is tensor for out in graph.outputs)


def detach(node: gs.Node) -> None:
    """Disconnect ``node``; cleanup removes it."""
    node.inputs.clear()
    node.outputs.clear()


def replace_reads(graph: gs.Graph, old: gs.Tensor, new: gs.Tensor) -> None:
    """Every reader of ``old`` reads ``new`` instead."""
    for node in consumers(graph, old):
        for index, inp in enumerate(node.inputs):
            if inp is old:
                node.inputs[index] = new


def merge_same(graph: gs.Graph, old: gs.Variable, new: gs.Variable, bridge: gs.Node) -> bool:
    """``old`` (written by ``bridge``) holds exactly ``new``'s values: drop ``bridge`` and let one tensor serve both.

    When ``old`` is a graph output its name must survive, so ``new``'s producer
    writes ``old`` instead (possible when ``new`` is neither a graph input nor a
    graph output); otherwise ``old``'s readers read ``new``.  Returns whether
    anything changed.
    """
    if not is_graph_output(graph, old):
        detach(bridge)
        replace_reads(graph, old, new)
        return True
    writer = producer(new)
    if writer is None or is_graph_output(graph, new) or any(inp is new for inp in graph.inputs):
        return False
    detach(bridge)
    replace_reads(graph, new, old)
    writer.outputs[writer.outputs.index(new)] = old
    return True
