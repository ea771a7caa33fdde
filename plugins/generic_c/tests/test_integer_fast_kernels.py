"""The fast integer convolution kernels (line buffer + im2col dense, pointwise, depthwise) are bit-exact with numpy on the geometry corners they special-case: padding on some sides only, strides, dilations,
groups, 1-D windows, reductions that are not a multiple of eight, pixel blocks with a partial last block,
int32 and int64 requantisation epilogues.  Each network runs untiled on generic-c (built with -Werror).  Tiled builds
keep the plain loop (``NetworkContext.for_tiles``); the cluster's peer and dialect tests cover them, and
test_tiled_builds_keep_the_plain_loop checks the choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import compile_model
from deeploy_core.ir.dtypes import INT8, UINT8
from deeploy_core.plugins import PluginHost
from plugins.generic_c.tests.integer_networks import Network, float_constant, options, run_bit_exact
from deeploy_core.testing.requant_reference import requant_shift

DIV = 1 << 12


def dilated_conv(x: np.ndarray, w: np.ndarray, pads: tuple[int, ...], strides: tuple[int, int],
                 dilations: tuple[int, int], group: int) -> np.ndarray:
    """Integer NCHW convolution with zero padding (top, left, bottom, right), strides, dilations and groups; int64."""
    x64 = np.pad(np.asarray(x, np.int64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    w64 = np.asarray(w, np.int64)
    n, _, h, width = x64.shape
    m, cg, kh, kw = w64.shape
    oh = (h - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (width - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    mg = m // group
    y = np.zeros((n, m, oh, ow), np.int64)
    for out in range(m):
        channels = x64[:, (out // mg) * cg:(out // mg + 1) * cg]
        for ky in range(kh):
            for kx in range(kw):
                top, left = ky * dilations[0], kx * dilations[1]
                window = channels[:, :, top:top + strides[0] * (oh - 1) + 1:strides[0],
                                  left:left + strides[1] * (ow - 1) + 1:strides[1]]
                y[:, out] += np.einsum("nchw,c->nhw", window, w64[out, :, ky, kx])
    return y


@dataclass(frozen=True)
class ConvCase:
    """One RequantizedConv: shapes, geometry and the kernel it must get."""

    channels: int
    outputs: int
    size: tuple[int, ...]
    kernel: tuple[int, ...]
    pads: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    group: int = 1
    signed_input: bool = False
    bias: bool = True
    large_mul: bool = False
    """A multiplier so large that the epilogue must stay int64."""


CONV_CASES = {
    "dense 3x3 pad 1, k=45 (tail)": ConvCase(5, 6, (9, 10), (3, 3), (1, 1, 1, 1), (1, 1), (1, 1)),
    "dense stride 2 dilation 2 uneven pads": ConvCase(3, 5, (13, 11), (3, 3), (0, 1, 2, 1), (2, 2), (2, 2)),
    "dense 2 groups 3x2 stride (1, 2)": ConvCase(4, 6, (7, 9), (3, 2), (1, 0, 1, 1), (1, 2), (1, 1), group=2),
    "dense k=576 signed input, int64 epilogue": ConvCase(64, 8, (5, 6), (3, 3), (1, 1, 1, 1), (1, 1), (1, 1),
                                                         signed_input=True, large_mul=True),
    "depthwise 3x3 stride 2 pad 1": ConvCase(7, 7, (11, 9), (3, 3), (1, 1, 1, 1), (2, 2), (1, 1), group=7),
    "depthwise dilation 2 no bias": ConvCase(4, 4, (10, 10), (3, 3), (2, 2, 2, 2), (1, 1), (2, 2), group=4, bias=False),
    "pointwise two blocks": ConvCase(20, 9, (13, 11), (1, 1), (0, 0, 0, 0), (1, 1), (1, 1)),
    "pointwise 2 groups signed": ConvCase(6, 4, (5, 7), (1, 1), (0, 0, 0, 0), (1, 1), (1, 1), group=2,
                                          signed_input=True),
    "1-D kernel 5 pad 2 stride 3": ConvCase(3, 4, (17,), (5,), (2, 2), (3,), (1,)),
}


def conv_network(case: ConvCase) -> Network:
    """RequantizedConv(x, w, [bias], mul, add) exported QuantLib-style (integers in float tensors)."""
    rng = np.random.default_rng(sum(case.size) + case.channels * 7 + case.outputs)
    one_d = len(case.size) == 1
    size, kernel = ((1, *case.size), (1, *case.kernel)) if one_d else (case.size, case.kernel)
    pads = (0, case.pads[0], 0, case.pads[1]) if one_d else case.pads
    strides, dilations = ((1, *case.strides), (1, *case.dilations)) if one_d else (case.strides, case.dilations)
    low, high = (-128, 128) if case.signed_input else (0, 256)
    x = rng.integers(low, high, (1, case.channels, *size)).astype(np.int8 if case.signed_input else np.uint8)
    w = rng.integers(-128, 128, (case.outputs, case.channels // case.group, *kernel)).astype(np.int8)
    bias = rng.integers(-3000, 3000, (case.outputs,)).astype(np.int32) if case.bias else None
    mul = rng.integers(1 << 20, 1 << 21, (case.outputs,)) if case.large_mul else rng.integers(1, 40, (case.outputs,))
    add = rng.integers(-20000, 20000, (case.outputs,))
    div = (1 << 30) if case.large_mul else DIV
    acc = dilated_conv(x, w, pads, strides, dilations, case.group)
    if bias is not None:
        acc = acc + bias.reshape(1, -1, 1, 1).astype(np.int64)
    expected = requant_shift(acc, mul.reshape(1, -1, 1, 1), add.reshape(1, -1, 1, 1), div, 256, True).astype(np.int8)
    x_in, w_in, out_shape = (x[:, :, 0], w[:, :, 0], list(expected[:, :, 0].shape)) if one_d else \
        (x, w, list(expected.shape))
    if one_d:
        expected = expected[:, :, 0]
    initializers = [float_constant("w", w_in), float_constant("mul", mul.reshape(-1, 1) if one_d else
                                                              mul.reshape(-1, 1, 1)),
                    float_constant("add", add.reshape(-1, 1) if one_d else add.reshape(-1, 1, 1))]
    inputs = ["x", "w", "mul", "add"]
    if bias is not None:
        initializers.append(float_constant("bias", bias))
        inputs.insert(2, "bias")
    node = helper.make_node("RequantizedConv", inputs, ["y"], name="node", kernel_shape=list(case.kernel),
                            pads=list(case.pads), strides=list(case.strides), dilations=list(case.dilations),
                            group=case.group, div=float(div), n_levels=256, signed=1)
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_in.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return Network(model, {"x": x_in}, expected, input_types={"x": INT8 if case.signed_input else UINT8})


@pytest.mark.parametrize("case", list(CONV_CASES))
def test_fast_integer_conv_is_bit_exact(case: str, generic_c_host: PluginHost, tmp_path: Path) -> None:
    assert run_bit_exact(conv_network(CONV_CASES[case]), generic_c_host, tmp_path) == "Conv + RequantShift integer"


def test_tiled_builds_keep_the_plain_loop(generic_c_host: PluginHost, tmp_path: Path) -> None:
    """The same layer gets the line-buffer kernel untiled and the scratch-free loop when tiled (its scratch would be
    paid per core and tile in L1), and both builds agree with numpy (``run_bit_exact`` checks bit-exactness)."""
    network = conv_network(CONV_CASES[next(iter(CONV_CASES))])
    path = tmp_path / "network.onnx"
    onnx.save(network.model, path)
    sources = {}
    for configuration, l1 in (("generic-c untiled", 0), ("generic-c tiled", 2048)):
        _, generated = compile_model(path, options(network.input_types, l1), generic_c_host)
        sources[configuration] = generated.files["Network.c"]
    assert "dc_lines" in sources["generic-c untiled"]
    assert "dc_lines" not in sources["generic-c tiled"] and "dc_tile_" in sources["generic-c tiled"]
