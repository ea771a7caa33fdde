"""Pooling (float32): max/average over 1-D or 2-D windows, and global pooling."""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.ir.dtypes import FLOAT32
from deeploy_core.mapping import (
    NodeMapper,
    NodeMismatch,
    NodeParser,
    NodeTypeChecker,
    OperatorRepresentation,
    attribute,
)
from deeploy_generic_c.ops._common import single_binding
from deeploy_generic_c.ops.linear import _resolve_pads, _spatial


class PoolParser(NodeParser):
    """1-D or 2-D windows; pads, strides, ceil_mode (through the output shape); dilations for max pooling."""

    outputs = (1, 1)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        rank = len(x.shape) - 2
        if rank not in (1, 2):
            raise NodeMismatch("shape", f"{rank}-D pooling is not supported (1-D and 2-D are)")
        kernel = [int(k) for k in attribute(node, "kernel_shape")]
        strides = _spatial(node, "strides", rank, 1)
        dilations = _spatial(node, "dilations", rank, 1)
        if self.kind == "avg" and any(d != 1 for d in dilations):
            raise NodeMismatch("attribute", "dilated average pooling is not supported")
        pads = _resolve_pads(node, x.shape[2:], y.shape[2:], kernel, strides, dilations)
        if rank == 1:
            kernel, strides, dilations, pads = [1, *kernel], [1, *strides], [1, *dilations], [0, pads[0], 0, pads[1]]
        n, c, *spatial = x.shape
        h, w = (1, spatial[0]) if rank == 1 else spatial
        oh, ow = (1, y.shape[2]) if rank == 1 else y.shape[2:]
        common = f"{x.c_name}, {y.c_name}, {n}, {c}, {h}, {w}, {oh}, {ow}, {kernel[0]}, {kernel[1]}, {strides[0]}, {strides[1]}, {pads[0]}, {pads[1]}"
        if self.kind == "max":
            call = f"dcg_maxpool2d_f32({common}, {dilations[0]}, {dilations[1]});"
        else:
            include = int(attribute(node, "count_include_pad", 0))
            call = f"dcg_avgpool2d_f32({common}, {pads[2]}, {pads[3]}, {include});"
        return {"call": call, "size": y.numel * kernel[0] * kernel[1]}


class MaxPoolParser(PoolParser):
    """1-D or 2-D max pooling; the Indices output is not supported."""

    outputs = (1, 2)

    def __init__(self) -> None:
        super().__init__("max")

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        if len(node.outputs) > 1 and node.outputs[1].name:
            raise NodeMismatch("shape", "the Indices output is not supported")
        if int(attribute(node, "storage_order", 0)):
            raise NodeMismatch("attribute", "storage_order=1 is not supported")
        return super().parse(node, ctxt)


class GlobalPoolParser(NodeParser):
    """Any rank >= 3."""

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        nc, spatial = math.prod(x.shape[:2]), math.prod(x.shape[2:])
        return {"call": f"dcg_{self.kernel}_f32({x.c_name}, {y.c_name}, {nc}, {spatial});", "size": x.numel}


FLOAT = NodeTypeChecker((FLOAT32,), (FLOAT32, None))


def _mapper(parser: NodeParser, name: str) -> tuple[NodeMapper, ...]:
    return single_binding(parser, FLOAT, name)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "MaxPool": _mapper(MaxPoolParser(), "MaxPool float32"),
    "AveragePool": _mapper(PoolParser("avg"), "AveragePool float32"),
    "GlobalAveragePool": _mapper(GlobalPoolParser("global_avgpool"), "GlobalAveragePool float32"),
    "GlobalMaxPool": _mapper(GlobalPoolParser("global_maxpool"), "GlobalMaxPool float32"),
}
