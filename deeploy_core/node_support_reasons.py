"""Why one node has no layer on a platform, in one line, sorted into the kinds ``supported-ops --model`` reports.

The mapper's :class:`~deeploy_core.midend.unsupported.UnsupportedNode` already
holds every alternative that was tried; this module only words the nearest
one for a per-node table: no mapper at all, a kernel whose types do not fit
(naming the node's types and the kernels' signatures), or a parser that
refuses the node (its own one-line reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.midend.unsupported import UnsupportedNode

SupportKind = Literal["supported", "lowered", "no-mapper", "types", "parser", "no-declaration", "not-checked"]
"""``supported``: a kernel takes the node; ``lowered``: lowering folded or fused the node away (nothing left
to map); ``no-mapper``: nothing maps the op on the platform; ``types``: the op is mapped but no kernel binds the
node's element types; ``parser``: every parser of the op refuses the node (attributes, shapes); ``no-declaration``:
the op has no ONNX schema and nothing declares its output types and shapes; ``not-checked``: the model cannot be
imported on the platform because of other nodes, so this one was not tried."""


@dataclass(frozen=True)
class NodeVerdict:
    """One node on one platform: its kind, the kernel that takes it, or the reason none does."""

    kind: SupportKind
    reason: str = ""
    kernel: str = ""

    @property
    def supported(self) -> bool:
        return self.kind in ("supported", "lowered")

    def as_json(self) -> dict[str, object]:
        return {"supported": self.supported, "kind": self.kind, "reason": self.reason, "kernel": self.kernel}


INPUT_TYPES_HINT = "; a float-declared integer network (Deeploy's dialect) needs its input types: --input-type"
"""Ends the reason of a node whose integer kernel a float-declared graph input keeps from binding: the table of
``supported-ops --model`` says it once for the network instead of once per node."""


def where_supported(supporters: tuple[str, ...]) -> str:
    """``; supported on: pulp-cluster`` or ``; no installed platform or operator plugin supports it``."""
    if not supporters:
        return "; no installed platform or operator plugin supports it"
    return f"; supported on: {', '.join(supporters)}"


def node_types(node: gs.Node, ctxt: NetworkContext) -> str:
    """``int8, int8 -> int32``: the element types of the node's present tensors."""
    def show(tensors: list[gs.Tensor]) -> str:
        return ", ".join(str(ctxt[tensor.name].dtype) for tensor in tensors if tensor.name)

    return f"{show(node.inputs)} -> {show(node.outputs)}"


def failure_verdict(failure: UnsupportedNode, node: gs.Node, ctxt: NetworkContext, platform: str,
                    supporters: tuple[str, ...]) -> NodeVerdict:
    """The verdict for a node the mapper could not place (the nearest alternative decides the kind)."""
    closest = failure.closest()
    if closest is None:
        return NodeVerdict("no-mapper",
                           f"no mapper for op {failure.op_type} on {platform}{where_supported(supporters)}")
    if closest.parsed or closest.category == "dtype":
        kernels = sorted({mismatch.alternative for mismatch in failure.mismatches
                          if mismatch.parsed or mismatch.category == "dtype"})
        hint = INPUT_TYPES_HINT if closest.wants_integer else ""
        return NodeVerdict("types", f"no kernel binds its types {node_types(node, ctxt)} ({closest.reason}); "
                                    f"kernels tried: {'; '.join(kernels)}{hint}")
    return NodeVerdict("parser", f"{closest.alternative or 'the parser'} refuses it: {closest.category} — "
                                 f"{closest.reason}")
