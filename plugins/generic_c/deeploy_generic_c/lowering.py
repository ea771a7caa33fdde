"""Lowering passes of the generic C platform: rewrites that make the graph cheaper to run."""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import OpChainPattern, Pass, Subgraph
from deeploy_generic_c.lowering_dialect import dialect_fusions
from deeploy_generic_c.lowering_elementwise import FuseElementwiseChains
from deeploy_generic_c.lowering_recurrent import RecurrentInt8Parameters


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


class FuseRequantisation(OpChainPattern):
    """Conv/Gemm/MatMul followed by RequantShift → one requantised node.

    The int32 accumulator then lives in a register instead of a full int32
    tensor in the arena (four times the bytes of the int8 result).
    """

    FUSED = {"Conv": "RequantizedConv", "Gemm": "RequantizedGemm", "MatMul": "RequantizedMatMul"}

    def __init__(self, producer: str) -> None:
        self.pattern = (producer, "RequantShift")
        self.producer = producer

    @property
    def name(self) -> str:
        return f"Fuse{self.producer}Requantisation"

    def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
        producer, requant = subgraph.nodes[0], subgraph.nodes[-1]
        if not all(isinstance(t, gs.Constant) for t in requant.inputs[1:3]):
            return False
        if self.producer != "MatMul":
            return True
        if len(subgraph.nodes) == 3:
            bias = _other_input(subgraph.nodes[1], producer.outputs[0])
            n = producer.outputs[0].shape[-1]
            return isinstance(bias, gs.Constant) and np.asarray(bias.values).size in (1, n)
        return True

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        producer, requant = subgraph.nodes[0], subgraph.nodes[-1]
        inputs = list(producer.inputs)
        if len(subgraph.nodes) == 3:
            bias = _other_input(subgraph.nodes[1], producer.outputs[0])
            assert bias is not None
            inputs.append(bias)
        fused = gs.Node(
            self.FUSED[self.producer],
            name=f"{producer.name}_rq",
            attrs={**producer.attrs, **requant.attrs},
            inputs=[*inputs, requant.inputs[1], requant.inputs[2]],
            outputs=[requant.outputs[0]],
        )
        for node in subgraph.nodes:
            node.outputs.clear()
        graph.nodes.append(fused)


class FuseMatMulBiasRequantisation(FuseRequantisation):
    """MatMul → Add(constant bias over the last axis) → RequantShift, as one requantised MatMul."""

    def __init__(self) -> None:
        super().__init__("MatMul")
        self.pattern = ("MatMul", "Add", "RequantShift")

    @property
    def name(self) -> str:
        return "FuseMatMulBiasRequantisation"


def _other_input(add: gs.Node, tensor: gs.Tensor) -> gs.Tensor | None:
    others = [t for t in add.inputs if t is not tensor]
    return others[0] if len(others) == 1 else None


def generic_c_lowering() -> list[Pass[gs.Graph]]:
    """The platform's lowering pipeline, run after constant folding."""
    return [
        MatMulAddToGemm(),
        FuseMatMulBiasRequantisation(),
        *(FuseRequantisation(op) for op in ("Conv", "Gemm", "MatMul")),
        *dialect_fusions(),
        RecurrentInt8Parameters(),
        FuseElementwiseChains(),  # after MatMul + Add became Gemm: a bias Add is not taken into a chain first
    ]
