"""Type checkers: which element types a binding's kernel accepts and produces."""

from __future__ import annotations

from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.ir import DataType, NetworkContext


@dataclass(frozen=True)
class NodeTypeChecker:
    """Input and output element types of one binding; ``None`` accepts any type (or an absent input)."""

    inputs: tuple[DataType | None, ...]
    outputs: tuple[DataType | None, ...]
    variadic: bool = False

    def check(self, node: gs.Node, ctxt: NetworkContext) -> str | None:
        """``None`` when the node's tensor types fit, else the reason."""
        for label, tensors, expected in (("input", node.inputs, self.inputs), ("output", node.outputs, self.outputs)):
            for index, tensor in enumerate(tensors):
                if not tensor.name:
                    continue
                want = expected[min(index, len(expected) - 1)] if self.variadic else (
                    expected[index] if index < len(expected) else None
                )
                have = ctxt[tensor.name].dtype
                if want is not None and have != want:
                    return f"{label} {index} is {have}, the kernel takes {want}"
        return None

    def signature(self) -> str:
        """``float32, float32 -> float32`` for listings."""
        def show(types: tuple[DataType | None, ...]) -> str:
            text = ", ".join(str(dtype) if dtype else "any" for dtype in types)
            return text + (", …" if self.variadic else "")

        return f"{show(self.inputs)} -> {show(self.outputs)}"
