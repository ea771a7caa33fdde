"""Type checkers: which element types a binding's kernel accepts and produces."""

from __future__ import annotations

from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.ir import DataType, NetworkContext
from deeploy_core.mapping.mismatch import IntegerWanted, Mismatch


@dataclass(frozen=True)
class NodeTypeChecker:
    """Input and output element types of one binding; ``None`` accepts any type (or an absent input)."""

    inputs: tuple[DataType | None, ...]
    outputs: tuple[DataType | None, ...]
    variadic: bool = False
    moves_storage_types: bool = False
    """Whether ``None`` also accepts the storage-only types (float16, carried as ``uint16_t`` bits): only kernels
    that move or convert elements without arithmetic (views, copies, Cast) say so, so a kernel written for
    "any type" never computes on a float16's bits as if they were an integer."""

    def check(self, node: gs.Node, ctxt: NetworkContext) -> str | None:
        """``None`` when the node's tensor types fit, else the reason."""
        for label, index, tensor, want in self._declared(node):
            have = ctxt[tensor.name].dtype
            if want is not None and have != want:
                return f"{label} {index} is {have}, the kernel takes {want}"
            if want is None and have.storage_only and not self.moves_storage_types:
                return f"{label} {index} is {have}, which the kernel does not compute on (only Cast and data movement do)"
        return None

    def refusal(self, node: gs.Node, ctxt: NetworkContext) -> Mismatch | None:
        """:meth:`check` as a :class:`Mismatch` that also names every float input this binding wants as an integer.

        Subclasses that override :meth:`check` keep working: the reason is
        always :meth:`check`'s.
        """
        reason = self.check(node, ctxt)
        if reason is None:
            return None
        wanted = tuple(
            IntegerWanted(tensor.name, want)
            for label, _, tensor, want in self._declared(node)
            if label == "input" and want is not None and not want.is_float and ctxt[tensor.name].dtype.is_float
        )
        return Mismatch("dtype", reason, parsed=True, wants_integer=wanted)

    def _declared(self, node: gs.Node) -> list[tuple[str, int, gs.Tensor, DataType | None]]:
        """(``input``/``output``, position, tensor, declared type) of every present tensor of ``node``."""
        rows = []
        for label, tensors, expected in (("input", node.inputs, self.inputs), ("output", node.outputs, self.outputs)):
            for index, tensor in enumerate(tensors):
                if not tensor.name:
                    continue
                want = expected[min(index, len(expected) - 1)] if self.variadic else (
                    expected[index] if index < len(expected) else None
                )
                rows.append((label, index, tensor, want))
        return rows

    def signature(self) -> str:
        """``float32, float32 -> float32`` for listings."""
        def show(types: tuple[DataType | None, ...]) -> str:
            text = ", ".join(str(dtype) if dtype else "any" for dtype in types)
            return text + (", …" if self.variadic else "")

        return f"{show(self.inputs)} -> {show(self.outputs)}"
