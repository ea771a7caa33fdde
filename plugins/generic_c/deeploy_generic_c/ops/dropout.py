"""Dropout at inference: the identity, any element type.

A deployed network does not train, and ONNX defines Dropout outside training
(``training_mode`` absent or false) as ``y = x`` with a mask of all true.  So
does training with ``ratio`` 0: nothing is dropped and the scale ``1/(1-0)``
is 1.  Any other training-mode Dropout draws random masks, which a
deterministic network cannot reproduce, and is refused.  Without a mask
output, ``y`` is a view of ``x`` (no code); with one, ``y`` is a copy and the
mask is filled with true.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation,
)


def _constant_scalar(ctxt: NetworkContext, node: gs.Node, index: int, what: str) -> float | None:
    """Optional input ``index`` as a number (None when absent); a run-time value is refused."""
    if not NodeParser.is_present(node, index):
        return None
    values = ctxt[node.inputs[index].name].values
    if values is None:
        raise NodeMismatch("attribute", f"{what} is given at run time; Dropout needs it constant to know it does "
                                        "not train")
    return float(np.asarray(values).reshape(-1)[0])


def check_inference(node: gs.Node, ctxt: NetworkContext) -> None:
    """Refuse a Dropout that would drop anything (training mode with a ratio other than 0)."""
    training = _constant_scalar(ctxt, node, 2, "training_mode")
    if not training:
        return
    ratio = _constant_scalar(ctxt, node, 1, "ratio")
    ratio = 0.5 if ratio is None else ratio
    if ratio != 0.0:
        raise NodeMismatch("attribute", f"Dropout in training mode with ratio {ratio:g} drops random elements; "
                                        "only inference (or ratio 0) is supported")


class DropoutViewParser(NodeParser):
    """No mask output: ``y`` is a view of ``x``."""

    inputs = (1, 3)
    outputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        check_inference(node, ctxt)
        if len(node.outputs) > 1 and node.outputs[1].name:
            raise NodeMismatch("shape", "the mask output is written by the copying kernel")
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        if x.dtype != y.dtype or x.numel != y.numel:
            raise NodeMismatch("shape", f"output {y.shape} {y.dtype} is not a view of input {x.shape} {x.dtype}")
        return {"alias_of": x.name, "size": 0}

    def count_ops(self, representation: OperatorRepresentation) -> int:
        return 0


class DropoutMaskParser(NodeParser):
    """A mask output: ``y = x`` copied, ``mask`` all true."""

    inputs = (1, 3)
    outputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        check_inference(node, ctxt)
        if len(node.outputs) < 2 or not node.outputs[1].name:
            raise NodeMismatch("shape", "no mask output: y is a view of x")
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        mask = ctxt[node.outputs[1].name]
        code = (f"for (int32_t i = 0; i < {y.numel}; ++i) {{ {y.c_name}[i] = {x.c_name}[i]; "
                f"{mask.c_name}[i] = 1u; }}")
        return {"code": code, "size": y.numel}


_ANY = NodeTypeChecker((None, None, None), (None, None), moves_storage_types=True)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Dropout": (NodeMapper(DropoutViewParser(), (NodeBinding(_ANY, NodeTemplate("/* view: no code */")),),
                           name="Dropout (alias)"),
                NodeMapper(DropoutMaskParser(), (NodeBinding(_ANY, NodeTemplate("${code}", headers=("stdint.h",))),),
                           name="Dropout with mask")),
}

NODE_TESTED = ("Dropout",)
