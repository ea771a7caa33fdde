"""CMSIS-NN's int8 pools: ``arm_avgpool_s8`` (TFLite's AveragePool) and ``arm_max_pool_s8`` (int8 MaxPool).

TFLite's average pool keeps its input's scale and zero point, sums the raw
values inside the input and divides by their count rounding half away from
zero -- what ``arm_avgpool_s8`` computes; the channels-last pass only
rewrites QLinearAveragePool nodes with equal input/output quantisation and no
counted padding.  Max pooling of int8 ignores padding, in ONNX and CMSIS-NN.
Both clamp to the fused activation's range.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    KernelRuntime, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation,
)

from deeploy_cortex_m.cmsis_nn import cmsis_nn
from deeploy_cortex_m.ops import cmsis_layer as cl
from deeploy_cortex_m.ops.cmsis_call import activation_range, int8
from deeploy_cortex_m.ops import cmsis_sources, scratch_sizes

AVGPOOL_ENTRY = "arm_avgpool_s8"
MAXPOOL_ENTRY = "arm_max_pool_s8"


class CmsisPoolParser(NodeParser):
    """int8 average (TFLite's) or max pooling over NHWC (CMSIS-NN)."""

    def __init__(self, entry: str, mve: bool) -> None:
        self.entry = entry
        self.mve = mve
        self.inputs = (5, 5) if entry == AVGPOOL_ENTRY else (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        int8(x, y)
        kernel = [int(k) for k in NodeParser.attribute(node, "kernel_shape", [])]
        if len(kernel) != 2:
            raise NodeMismatch("attribute", "CMSIS-NN pools 2-D windows")
        win = cl.window(node, x, y, (kernel[0], kernel[1]))
        if win.oc != win.c:
            raise NodeMismatch("shape", "a pool keeps its channels")
        low, high = activation_range(node)
        scratch = scratch_sizes.avgpool(win, self.mve) if self.entry == AVGPOOL_ENTRY else 0
        code = "\n".join([
            cl.context(scratch),
            f"const cmsis_nn_pool_params cm_params = {{.stride = {cl.tile(*win.stride)}, "
            f".padding = {cl.tile(*win.pad)}, .activation = {{.min = {low}, .max = {high}}}}};",
            cl.dims("cm_input_dims", win.n, win.h, win.w, win.c), cl.dims("cm_filter_dims", 1, win.kh, win.kw, 1),
            cl.dims("cm_output_dims", win.n, win.oh, win.ow, win.c),
            f"(void){self.entry}(&cm_ctx, &cm_params, &cm_input_dims, {x.c_name}, &cm_filter_dims, "
            f"&cm_output_dims, {y.c_name});",
        ])
        return {"code": code, "scratch_bytes": scratch, "scratch": "NULL", "size": y.numel * win.kh * win.kw, "cmsis_nn": self.entry,
                "requantization": {"arithmetic": "tflite", "range": [low, high]}}


def _mapper(entry: str, arity: int, mve: bool) -> NodeMapper:
    runtime = KernelRuntime(external=(cmsis_nn(sources=cmsis_sources.sources(entry, mve)),))
    return NodeMapper(CmsisPoolParser(entry, mve), (NodeBinding(cl.any_types(arity), cl.TEMPLATE),),
                      name=f"CMSIS-NN {entry}", runtime=runtime)


def pool_mappers(mve: bool) -> dict[str, tuple[NodeMapper, ...]]:
    """The channels-last pools' mappers on the core's path."""
    from deeploy_cortex_m.layout.layers import AVERAGE_POOL, MAX_POOL

    return {AVERAGE_POOL: (_mapper(AVGPOOL_ENTRY, 5, mve),), MAX_POOL: (_mapper(MAXPOOL_ENTRY, 1, mve),)}
