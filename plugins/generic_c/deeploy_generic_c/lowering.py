"""Lowering passes of the generic C platform: rewrites that make the graph cheaper to run."""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.passes import OpChainPattern, Pass, Subgraph


class MatMulAddToGemm(OpChainPattern):
    """``MatMul(A, B) + C`` with 2-D A, constant 2-D B and constant C broadcastable to [M, N] → one Gemm.

    The bias is then added inside the GEMM kernel instead of in a second pass
    over the output, and the intermediate tensor disappears from the arena.
    """

    pattern = ("MatMul", "Add")

    def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
        matmul, add = subgraph.nodes
        a, b = matmul.inputs
        if a.shape is None or len(a.shape) != 2 or not isinstance(b, gs.Constant) or len(b.shape) != 2:
            return False
        bias = _other_input(add, matmul.outputs[0])
        if not isinstance(bias, gs.Constant) or bias.values.dtype != b.values.dtype:
            return False
        m, n = a.shape[0], b.shape[1]
        shape = (1,) * (2 - len(bias.shape)) + tuple(bias.shape) if len(bias.shape) <= 2 else None
        return shape is not None and shape[0] in (1, m) and shape[1] in (1, n)

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        matmul, add = subgraph.nodes
        bias = _other_input(add, matmul.outputs[0])
        assert isinstance(bias, gs.Constant)
        values = np.asarray(bias.values)
        if values.ndim == 0:
            values = values.reshape(1)
        constant = gs.Constant(f"{bias.name}_gemm_bias", np.ascontiguousarray(values))
        gemm = gs.Node("Gemm", name=f"{matmul.name}_gemm", inputs=[matmul.inputs[0], matmul.inputs[1], constant],
                       outputs=[add.outputs[0]])
        matmul.outputs.clear()
        add.outputs.clear()
        graph.nodes.append(gemm)


def _other_input(add: gs.Node, tensor: gs.Tensor) -> gs.Tensor | None:
    others = [t for t in add.inputs if t is not tensor]
    return others[0] if len(others) == 1 else None


def generic_c_lowering() -> list[Pass[gs.Graph]]:
    """The platform's lowering pipeline, run after constant folding."""
    return [MatMulAddToGemm()]
