"""QLinearConv's kernels give the exact int32 accumulator everywhere: the fast line-buffer kernels and the loops.

The loops take different paths for whole windows (blocks of 16/8/4/2 outputs,
input zero point folded into a per-channel constant), windows cut at the top
or bottom (blocks subtracting the zero point per tap) and windows cut at the
sides (one output at a time), and flatten pointwise convolutions into one
row.  Each case below exercises some of them; every output is compared with
numpy's exact integer convolution requantised as ONNX Runtime does
(``rint(float32(acc) · float32(s_x · s_w / s_y)) + z_y``, saturated), which is
what every requantiser of the layer reproduces.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_generic_c.kernels import integer_conv as conv_kernels


@dataclass(frozen=True)
class ConvCase:
    channels: int
    out_channels: int
    size: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: int = 1
    pad: int = 0
    dilation: int = 1
    group: int = 1
    x_zero: int = -3
    w_zero: int = 0
    dtype: type = np.int8
    per_channel: bool = False


CASES = {
    "3x3-pad-32": ConvCase(4, 5, (32, 32), (3, 3), pad=1),
    "3x3-pad-8-perchannel": ConvCase(8, 6, (8, 8), (3, 3), pad=1, per_channel=True),
    "3x3-stride2": ConvCase(4, 6, (17, 17), (3, 3), stride=2, pad=1),
    "dilated": ConvCase(3, 4, (20, 20), (3, 3), pad=2, dilation=2),
    "depthwise": ConvCase(6, 6, (25, 5), (3, 3), pad=1, group=6),
    "depthwise-bands": ConvCase(3, 3, (48, 47), (3, 3), pad=1, group=3, per_channel=True),
    "depthwise-dilated": ConvCase(4, 4, (11, 9), (3, 3), pad=2, dilation=2, group=4),
    "depthwise-1x5-unpadded": ConvCase(2, 2, (7, 13), (1, 5), group=2),
    "depthwise-stride2": ConvCase(4, 4, (13, 13), (3, 3), stride=2, pad=1, group=4),
    "depthwise-5x5": ConvCase(2, 2, (9, 9), (5, 5), pad=2, group=2),
    "depthwise-1d": ConvCase(3, 3, (30,), (3,), pad=1, group=3),
    "pointwise": ConvCase(16, 8, (25, 5), (1, 1)),
    "pointwise-12": ConvCase(12, 8, (9, 7), (1, 1)),
    "pointwise-odd-channels": ConvCase(8, 7, (5, 6), (1, 1), per_channel=True),
    "pointwise-stride2": ConvCase(8, 8, (16, 16), (1, 1), stride=2),
    "dscnn-stem": ConvCase(1, 8, (49, 10), (10, 4), stride=2, pad=2),
    "zero-x-zero-point": ConvCase(4, 4, (12, 12), (3, 3), pad=1, x_zero=0),
    "asymmetric-uint8": ConvCase(4, 4, (12, 12), (3, 3), pad=1, x_zero=120, w_zero=9, dtype=np.uint8),
    "1d": ConvCase(4, 6, (40,), (5,), pad=2),
}


def _layer(name: str, case: ConvCase, rng: np.random.Generator) -> tuple[onnx.NodeProto, list, dict]:
    dtype = np.dtype(case.dtype)
    info = np.iinfo(dtype)
    weight_shape = (case.out_channels, case.channels // case.group, *case.kernel)
    low, high = (-127, 128) if dtype == np.int8 else (0, 128)  # 7-bit uint8 weights: no saturating reference path
    weights = rng.integers(low, high, weight_shape).astype(dtype)
    w_scale = (rng.uniform(0.002, 0.02, case.out_channels) if case.per_channel else np.array([0.01])).astype(np.float32)
    w_zero = np.full(w_scale.shape, case.w_zero, dtype)
    params = {"sx": np.float32(0.03), "zx": case.x_zero, "sy": np.float32(0.4), "zy": 2 if dtype == np.int8 else 130,
              "w": weights, "sw": w_scale, "zw": w_zero, "bias": rng.integers(-500, 500, case.out_channels).astype(np.int32)}
    initializers = [numpy_helper.from_array(np.array(params["sx"], np.float32), f"{name}_sx"),
                    numpy_helper.from_array(np.array(case.x_zero, dtype), f"{name}_zx"),
                    numpy_helper.from_array(weights, f"{name}_w"),
                    numpy_helper.from_array(w_scale if case.per_channel else w_scale.reshape(()), f"{name}_sw"),
                    numpy_helper.from_array(w_zero if case.per_channel else w_zero.reshape(()), f"{name}_zw"),
                    numpy_helper.from_array(np.array(params["sy"], np.float32), f"{name}_sy"),
                    numpy_helper.from_array(np.array(params["zy"], dtype), f"{name}_zy"),
                    numpy_helper.from_array(params["bias"], f"{name}_bias")]
    rank = len(case.kernel)
    node = helper.make_node(
        "QLinearConv", [f"{name}_{p}" for p in ("x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias")], [f"{name}_y"],
        kernel_shape=list(case.kernel), strides=[case.stride] * rank, pads=[case.pad] * (2 * rank),
        dilations=[case.dilation] * rank, group=case.group)
    assert info.min <= params["zy"] <= info.max
    return node, initializers, params


def _reference(case: ConvCase, x: np.ndarray, params: dict) -> np.ndarray:
    """Exact integer convolution (int64), then ONNX Runtime's float32 requantisation."""
    xs = np.pad(x.astype(np.int64) - case.x_zero, [(0, 0), (0, 0)] + [(case.pad, case.pad)] * len(case.kernel))
    w = params["w"].astype(np.int64) - case.w_zero
    if len(case.kernel) == 1:
        xs, w = xs[:, :, None, :], w[:, :, None, :]
    kh, kw = w.shape[2:]
    span_h, span_w = (kh - 1) * case.dilation + 1, (kw - 1) * case.dilation + 1
    oh = (xs.shape[2] - span_h) // case.stride + 1 if len(case.kernel) == 2 else 1
    ow = (xs.shape[3] - span_w) // case.stride + 1
    cg, mg = case.channels // case.group, case.out_channels // case.group
    acc = np.zeros((case.out_channels, oh, ow), np.int64) + params["bias"][:, None, None]
    for mo in range(case.out_channels):
        group = mo // mg
        for ky in range(kh):
            for kx in range(kw):
                y0 = ky * case.dilation if len(case.kernel) == 2 else 0
                window = xs[0, group * cg:(group + 1) * cg, y0:y0 + (oh - 1) * case.stride + 1:case.stride,
                            kx * case.dilation:kx * case.dilation + (ow - 1) * case.stride + 1:case.stride]
                acc[mo] += np.tensordot(w[mo, :, ky, kx], window, axes=(0, 0))
    scale = (np.float32(params["sx"]) * params["sw"].astype(np.float32)) / np.float32(params["sy"])
    scale = np.broadcast_to(scale, (case.out_channels,))[:, None, None]
    info = np.iinfo(case.dtype)
    values = np.rint(acc.astype(np.float32) * scale) + params["zy"]
    result = np.clip(values, info.min, info.max).astype(case.dtype)
    return result[None, :, 0, :] if len(case.kernel) == 1 else result[None]


@pytest.mark.parametrize("kernels", ["fast", "loops"])
def test_every_path_of_the_conv_loops_is_exact(kernels: str, tmp_path: Path, generic_c_host: PluginHost,
                                               runtime_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fast``: untiled symmetric-weight layers take the platform's int16 line-buffer kernels (x - zx copied);
    ``loops``: those kernels refused, as in tiled builds, every layer runs the blocked loops."""
    if kernels == "loops":
        monkeypatch.setattr(conv_kernels, "applies", lambda *args: False)
    rng = np.random.default_rng(21)
    nodes, initializers, inputs, outputs, layers = [], [], [], [], {}
    for name, case in CASES.items():
        tag = name.replace("-", "_")
        node, constants, params = _layer(tag, case, rng)
        nodes.append(node)
        initializers += constants
        element = TensorProto.INT8 if case.dtype is np.int8 else TensorProto.UINT8
        inputs.append(helper.make_tensor_value_info(f"{tag}_x", element, [1, case.channels, *case.size]))
        x = np.zeros((1, case.channels, *case.size), case.dtype)
        out_shape = _reference(case, x, params).shape
        outputs.append(helper.make_tensor_value_info(f"{tag}_y", element, list(out_shape)))
        layers[tag] = (case, params)
    graph = helper.make_graph(nodes, "convs", inputs, outputs, initializers)
    path = tmp_path / "convs.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    _, generated = compile_model(path, CompileOptions(platform="generic-c"), generic_c_host)
    fast = [layer["node"] for layer in generated.report["layers"] if layer["scratch_bytes"]]  # line buffers
    assert (len(fast) == len(CASES) - 1) if kernels == "fast" else not fast, fast  # asymmetric weights: loops
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    for _ in range(5):
        feeds = {}
        for tag, (case, _) in layers.items():
            info = np.iinfo(case.dtype)
            feeds[f"{tag}_x"] = rng.integers(info.min, int(info.max) + 1, (1, case.channels, *case.size)).astype(case.dtype)
        actual, _ = run_network(executable, generated, feeds, repeats=1)
        for (tag, (case, params)), got in zip(layers.items(), actual):
            expected = _reference(case, feeds[f"{tag}_x"], params)
            np.testing.assert_array_equal(got.reshape(expected.shape), expected, err_msg=tag)


@pytest.mark.parametrize("name", ["3x3-pad-32", "pointwise"])
def test_the_reference_catches_an_off_by_one_window(name: str) -> None:
    """The numpy reference is not blind: shifting the input by one column changes the expected outputs."""
    rng = np.random.default_rng(3)
    case = CASES[name]
    _, _, params = _layer("t", case, rng)
    x = rng.integers(-128, 128, (1, case.channels, *case.size)).astype(np.int8)
    assert not np.array_equal(_reference(case, x, params), _reference(case, np.roll(x, 1, axis=-1), params))
