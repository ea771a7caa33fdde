"""CMSIS-NN's int8 convolutions: ``arm_convolve_wrapper_s8`` and ``arm_depthwise_conv_wrapper_s8``.

The nodes come from the channels-last pass (NHWC input and output, OHWI or
``[1, KH, KW, C·mult]`` weights, QLinearConv's other inputs unchanged).  The
requantisation is TFLite's (``arm_nn_requantize``'s default double rounding),
so the per-channel multipliers and shifts come from the core's
``tflite_parameters`` exactly as generic C's fixed-point kernels get theirs;
the wrappers pick CMSIS-NN's 1x1 / 1xN / 3x3 / general kernels themselves.
The scratch each asks of the arena is what ``*_get_buffer_size`` returns on the
core's path, DSP extension or Helium (:mod:`.scratch_sizes`).
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    KernelRuntime, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation,
    tflite_parameters,
)

from deeploy_cortex_m.cmsis_nn import cmsis_nn
from deeploy_cortex_m.ops import cmsis_layer as cl
from deeploy_cortex_m.ops.cmsis_call import activation_range, int8, int_table, scalar
from deeploy_cortex_m.ops import cmsis_sources, scratch_sizes

CONV_ENTRY = "arm_convolve_wrapper_s8"
DEPTHWISE_ENTRY = "arm_depthwise_conv_wrapper_s8"


class CmsisConvParser(NodeParser):
    """int8 Conv / depthwise Conv, NHWC, TFLite requantisation, symmetric weights (CMSIS-NN)."""

    inputs = (8, 9)

    def __init__(self, depthwise: bool, mve: bool) -> None:
        self.depthwise = depthwise
        self.mve = mve

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, w, y = ctxt[node.inputs[0].name], ctxt[node.inputs[3].name], ctxt[node.outputs[0].name]
        int8(x, w, y)
        weights = np.asarray(NodeParser.constant_values(ctxt, node.inputs[3], "the weights"))
        w_scales = np.asarray(NodeParser.constant_values(ctxt, node.inputs[4], "the weight scales"), np.float64)
        w_zero = np.asarray(NodeParser.constant_values(ctxt, node.inputs[5], "the weight zero points"))
        if np.any(w_zero):
            raise NodeMismatch("attribute", "CMSIS-NN's s8 convolutions take symmetric weights only")
        kernel = (int(weights.shape[1]), int(weights.shape[2]))
        win = cl.window(node, x, y, kernel)
        x_scale, zx = scalar(ctxt, node, 1, "the input scale"), int(scalar(ctxt, node, 2, "the input zero point"))
        y_scale, zy = scalar(ctxt, node, 6, "the output scale"), int(scalar(ctxt, node, 7, "the output zero point"))
        scales = np.broadcast_to(w_scales.reshape(-1), (win.oc,))
        multipliers, shifts = tflite_parameters.linear_multipliers(x_scale, scales, y_scale)
        low, high = activation_range(node)
        bias = ctxt[node.inputs[8].name].c_name if NodeParser.is_present(node, 8) else "cm_zero_bias"
        tables = [int_table("cm_mult", multipliers), int_table("cm_shift", shifts)]
        if not NodeParser.is_present(node, 8):
            tables.append(int_table("cm_zero_bias", [0] * win.oc))
        common = (f".input_offset = {-zx}, .output_offset = {zy}, .stride = {cl.tile(*win.stride)}, "
                  f".padding = {cl.tile(*win.pad)}, .dilation = {cl.tile(*win.dilation)}, "
                  f".activation = {{.min = {low}, .max = {high}}}")
        if self.depthwise:
            mult = win.oc // win.c
            scratch = scratch_sizes.depthwise_conv(win, mult, self.mve)
            params = f"const cmsis_nn_dw_conv_params cm_params = {{{common}, .ch_mult = {mult}}};"
            filter_dims = cl.dims("cm_filter_dims", 1, win.kh, win.kw, win.oc)
            entry, macs = DEPTHWISE_ENTRY, win.n * win.oh * win.ow * win.oc * win.kh * win.kw
        else:
            scratch = scratch_sizes.conv(win, self.mve)
            params = f"const cmsis_nn_conv_params cm_params = {{{common}}};"
            filter_dims = cl.dims("cm_filter_dims", win.oc, win.kh, win.kw, win.c)
            entry, macs = CONV_ENTRY, win.n * win.oh * win.ow * win.oc * win.kh * win.kw * win.c
        code = "\n".join([
            *tables, cl.context(scratch), params,
            "const cmsis_nn_per_channel_quant_params cm_quant = {.multiplier = (int32_t *)cm_mult, "
            ".shift = (int32_t *)cm_shift};",
            cl.dims("cm_input_dims", win.n, win.h, win.w, win.c), filter_dims,
            cl.dims("cm_bias_dims", 1, 1, 1, win.oc), cl.dims("cm_output_dims", win.n, win.oh, win.ow, win.oc),
            f"(void){entry}(&cm_ctx, &cm_params, &cm_quant, &cm_input_dims, {x.c_name}, &cm_filter_dims, "
            f"{w.c_name}, &cm_bias_dims, (const int32_t *){bias}, &cm_output_dims, {y.c_name});",
        ])
        single = len(set(zip(multipliers, shifts))) == 1
        return {"code": code, "scratch_bytes": scratch, "scratch": "NULL", "macs": macs, "size": y.numel, "cmsis_nn": entry,
                "requantization": {"arithmetic": "tflite", "rounding": "double",
                                   "multiplier": multipliers[0] if single else multipliers,
                                   "shift": shifts[0] if single else shifts, "zero_point": zy, "range": [low, high]}}


def _mapper(depthwise: bool, mve: bool) -> NodeMapper:
    entry = DEPTHWISE_ENTRY if depthwise else CONV_ENTRY
    runtime = KernelRuntime(external=(cmsis_nn(sources=cmsis_sources.sources(entry, mve)),))
    return NodeMapper(CmsisConvParser(depthwise, mve), (NodeBinding(cl.any_types(9), cl.TEMPLATE),),
                      name=f"CMSIS-NN {entry}", runtime=runtime)


def conv_mappers(mve: bool) -> dict[str, tuple[NodeMapper, ...]]:
    """The channels-last convolutions' mappers on the core's path (their op types exist only after the layout
    pass)."""
    from deeploy_cortex_m.layout.layers import CONV, DEPTHWISE

    return {CONV: (_mapper(False, mve),), DEPTHWISE: (_mapper(True, mve),)}
