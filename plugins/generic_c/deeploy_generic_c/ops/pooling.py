"""Pooling (float32): max/average over 1-D or 2-D windows, and global pooling."""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    FLOAT32,
    NetworkContext,
    NodeMapper,
    NodeMismatch,
    NodeParser,
    NodeTypeChecker,
    OperatorRepresentation,
    attribute,
)
from deeploy_generic_c.ops._common import single_binding
from deeploy_generic_c.ops._window import sliding_window


class PoolParser(NodeParser):
    """1-D or 2-D windows; pads, strides, ceil_mode (through the output shape); dilations for max pooling."""

    outputs = (1, 1)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        win = sliding_window(node, x, y, [int(k) for k in attribute(node, "kernel_shape")], "pooling")
        if self.kind == "avg" and (win.dil_h, win.dil_w) != (1, 1):
            raise NodeMismatch("attribute", "dilated average pooling is not supported")
        common = (
            f"{x.c_name}, {y.c_name}, {win.n}, {win.c}, {win.h}, {win.w}, {win.oh}, {win.ow}, {win.kh}, {win.kw}, "
            f"{win.stride_h}, {win.stride_w}, {win.pad_top}, {win.pad_left}"
        )
        if self.kind == "max":
            call = f"dcg_maxpool2d_f32({common}, {win.dil_h}, {win.dil_w});"
        else:
            include = int(attribute(node, "count_include_pad", 0))
            call = f"dcg_avgpool2d_f32({common}, {win.pad_bottom}, {win.pad_right}, {include});"
        return {"call": call, "size": y.numel * win.kh * win.kw}


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
