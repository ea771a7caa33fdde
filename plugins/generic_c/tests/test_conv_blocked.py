"""Float Conv with bounded im2col (conv.c, ops/conv/float32.py) against ONNX Runtime (issue 21, item 3).

The layers here are small enough to take the direct loop (test_conv_direct.py); each test
forces the im2col path by lowering DIRECT_CONV_MAX_FILTERS.

A layer whose whole-layer im2col exceeds CONV_SCRATCH_BYTES gathers blocks of
output positions; a block may start and end inside an output row, so the
cases use widths that do not divide the block, and padding, strides,
dilations, groups, 1-D and bias/no bias so that blocks straddle padded
borders.  Each case also runs whole-layer (block = all positions) and checks
the two builds agree bit for bit: blocking changes only the memory, not the
rounding.  The report's per-layer scratch is the kernel's block, never the
whole layer's im2col.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import pytest

import deeploy_generic_c.kernels.direct_conv as direct_conv
import deeploy_generic_c.ops.conv.float32 as linear
from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.plugins import PluginHost
from plugins.generic_c.tests.float_conv_cases import ConvCase, conv_model



CASES = {
    "cct-first": ConvCase(3, 8, (16, 16), (3, 3), {"pads": [1, 1, 1, 1]}, bias=False),
    "padded-odd-width": ConvCase(4, 6, (13, 19), (3, 3), {"pads": [1, 2, 1, 0]}),
    "strided": ConvCase(2, 4, (64, 32), (8, 8), {"pads": [1, 1, 1, 1], "strides": [2, 4]}),
    "dilated": ConvCase(5, 3, (20, 23), (3, 3), {"pads": [2, 2, 2, 2], "dilations": [2, 2]}),
    "grouped": ConvCase(8, 8, (18, 18), (3, 3), {"pads": [1, 1, 1, 1], "group": 2}),
    "one-channel-out": ConvCase(6, 1, (17, 21), (3, 5), {"pads": [1, 2, 1, 2]}),
    "one-d": ConvCase(4, 5, (300,), (7,), {"pads": [3, 1], "strides": [2]}),
    "same-upper": ConvCase(3, 7, (15, 15), (4, 4), {"auto_pad": "SAME_UPPER"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_blocked_conv_matches_onnx_runtime_and_whole_layer(name: str, generic_c_host: PluginHost, runtime_cache: Path,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    path = tmp_path / "conv.onnx"
    onnx.save(conv_model(case), path)
    data = {"x": np.random.default_rng(7).standard_normal((1, case.channels, *case.spatial)).astype(np.float32)}
    # These layers have few filters per group and would take the direct loop: force the im2col path under test.
    monkeypatch.setattr(direct_conv, "DIRECT_CONV_MAX_FILTERS", 0)
    # A small bound and block, so every case runs several blocks (the defaults would leave small layers whole).
    monkeypatch.setattr(linear, "CONV_SCRATCH_BYTES", 256)
    monkeypatch.setattr(linear, "CONV_MIN_BLOCK", 24)
    blocked, result = validate_with_data(path, CompileOptions(platform="generic-c"), generic_c_host, data,
                                         atol=1e-4, rtol=1e-4, cache_dir=runtime_cache)
    assert all(c.ok for c in result.comparisons), result.comparisons
    layer = blocked.report["layers"][0]
    out_positions = math.prod(layer["outputs"][0]["shape"][2:])
    patch = case.channels // int(case.attrs.get("group", 1)) * math.prod(case.kernel)
    assert 0 < layer["scratch_bytes"] < patch * out_positions * 4  # a block, not the whole im2col
    monkeypatch.setattr(linear, "CONV_SCRATCH_BYTES", 1 << 30)
    whole, reference = validate_with_data(path, CompileOptions(platform="generic-c"), generic_c_host, data,
                                          atol=1e-4, rtol=1e-4, cache_dir=runtime_cache)
    assert whole.report["layers"][0]["scratch_bytes"] == patch * out_positions * 4
    np.testing.assert_array_equal(result.outputs[0], reference.outputs[0])


def test_block_rule_bounds_the_scratch() -> None:
    # CCT_1_16_16_8's first conv: 27 taps x 256 positions (27,648 B whole) -> blocks of 72 positions (7,776 B).
    assert linear.conv_block(3, 3, 3, 16, 16, 1) == 72
    assert linear.conv_scratch_floats(3, 8, 3, 3, 16, 16, (1, 1), [1, 1, 1, 1], (1, 1), 1, 72) * 4 == 7776
    # Small layers keep the whole-layer im2col (one GEMM into Y); depthwise and pointwise need none.
    assert linear.conv_block(1, 3, 3, 8, 8, 1) == 64
    assert linear.conv_scratch_floats(8, 8, 3, 3, 8, 8, (1, 1), [1, 1, 1, 1], (1, 1), 8, 64) == 0
    assert linear.conv_scratch_floats(8, 4, 1, 1, 8, 8, (1, 1), [0, 0, 0, 0], (1, 1), 1, 64) == 0
    # Bounded by CONV_SCRATCH_BYTES, or one block of CONV_MIN_BLOCK positions when a position's taps need more.
    for c, k, side in ((16, 3, 32), (64, 3, 56), (256, 5, 14)):
        block = linear.conv_block(c, k, k, side, side, 1)
        assert c * k * k * block * 4 <= max(linear.CONV_SCRATCH_BYTES, c * k * k * linear.CONV_MIN_BLOCK * 4)
