"""The float32 normalisation layers: LayerNormalization (output Y only), BatchNormalization, InstanceNormalization
and GroupNormalization, each a call of the runtime's kernel; Softmax is in the softmax family
(:mod:`deeploy_generic_c.ops.softmax`)."""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import c_float, single_axis, single_binding

F32 = dtypes.FLOAT32


class LayerNormParser(NodeParser):
    """Normalises over dims [axis, rank); scale (and bias) must cover exactly those dims; only output Y."""

    inputs = (2, 3)
    outputs = (1, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, scale, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        if any(tensor.name for tensor in node.outputs[1:]):
            raise NodeMismatch("shape", "Mean/InvStdDev outputs are not supported")
        axis = single_axis(node, len(x.shape), -1)
        norm = math.prod(x.shape[axis:])
        if scale.numel != norm:
            raise NodeMismatch("shape", f"scale has {scale.numel} elements, the normalised size is {norm}")
        bias = "NULL"
        if NodeParser.is_present(node, 2):
            bias_buffer = ctxt[node.inputs[2].name]
            if bias_buffer.numel != norm:
                raise NodeMismatch("shape", f"bias has {bias_buffer.numel} elements, the normalised size is {norm}")
            bias = bias_buffer.c_name
        epsilon = float(NodeParser.attribute(node, "epsilon", 1e-5))
        return {
            "call": f"dcg_layernorm_f32({x.c_name}, {scale.c_name}, {bias}, {y.c_name}, {x.numel // norm}, {norm}, {c_float(epsilon)});",
            "size": y.numel * 4,
        }


class BatchNormParser(NodeParser):
    """Inference mode (training_mode = 0), rank >= 2."""

    inputs = (5, 5)
    outputs = (1, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        if int(NodeParser.attribute(node, "training_mode", 0)):
            raise NodeMismatch("attribute", "training_mode=1 is not supported")
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        if len(x.shape) < 2:
            raise NodeMismatch("shape", "input rank must be at least 2")
        scale, bias, mean, var = (ctxt[node.inputs[i].name].c_name for i in range(1, 5))
        n, c = x.shape[0], x.shape[1]
        spatial = math.prod(x.shape[2:])
        epsilon = float(NodeParser.attribute(node, "epsilon", 1e-5))
        return {
            "call": f"dcg_batchnorm_f32({x.c_name}, {scale}, {bias}, {mean}, {var}, {y.c_name}, {n}, {c}, {spatial}, {c_float(epsilon)});",
            "size": y.numel * 2,
        }


class InstanceNormParser(NodeParser):
    """Rank >= 3; scale and bias per channel."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, scale, bias, y = (ctxt[t.name] for t in (*node.inputs, node.outputs[0]))
        if len(x.shape) < 3:
            raise NodeMismatch("shape", "input rank must be at least 3")
        n, c, spatial = x.shape[0], x.shape[1], math.prod(x.shape[2:])
        epsilon = float(NodeParser.attribute(node, "epsilon", 1e-5))
        return {
            "call": f"dcg_instancenorm_f32({x.c_name}, {scale.c_name}, {bias.c_name}, {y.c_name}, {n}, {c}, {spatial}, {c_float(epsilon)});",
            "size": y.numel * 4,
        }


class GroupNormParser(NodeParser):
    """Opset-21 semantics (scale and bias per channel); num_groups divides the channels."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, scale, bias, y = (ctxt[t.name] for t in (*node.inputs, node.outputs[0]))
        n, c, spatial = x.shape[0], x.shape[1], math.prod(x.shape[2:])
        groups = int(NodeParser.attribute(node, "num_groups", 1))
        if groups <= 0 or c % groups:
            raise NodeMismatch("attribute", f"num_groups={groups} does not divide {c} channels")
        if scale.numel != c or bias.numel != c:
            raise NodeMismatch("shape", "scale and bias must have one value per channel (opset 21)")
        if int(NodeParser.attribute(node, "stash_type", 1)) != 1:
            raise NodeMismatch("attribute", "stash_type other than float32 is not supported")
        epsilon = float(NodeParser.attribute(node, "epsilon", 1e-5))
        return {
            "call": f"dcg_groupnorm_f32({x.c_name}, {scale.c_name}, {bias.c_name}, {y.c_name}, {n}, {c}, {spatial}, {groups}, {c_float(epsilon)});",
            "size": y.numel * 4,
        }


def _mapper(parser: NodeParser, arity: int, name: str) -> tuple[NodeMapper, ...]:
    return single_binding(parser, NodeTypeChecker((F32,) * arity, (F32, F32, F32)), name)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "LayerNormalization": _mapper(LayerNormParser(), 3, "LayerNormalization float32"),
    "BatchNormalization": _mapper(BatchNormParser(), 5, "BatchNormalization float32"),
    "InstanceNormalization": _mapper(InstanceNormParser(), 3, "InstanceNormalization float32"),
    "GroupNormalization": _mapper(GroupNormParser(), 3, "GroupNormalization float32"),
}
