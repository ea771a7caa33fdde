"""Float Conv as a direct loop in the layer (ops/kernels/direct_conv.py) against ONNX Runtime.

Layers with few output channels per group skip im2col: each output position
keeps one accumulator per output channel of its group, the columns whose taps
all fall inside the input run without bound tests, and the border columns and
rows clip their tap ranges.  The cases put every part of that under test:
padding on each side (asymmetric, and wider than a stride so several border
columns exist), strides, dilations (clipping by a dilated tap range), groups,
1-D, several images, bias and no bias, a layer with no interior column at all
and one with no border.  The generated C must compile without warnings under
gcc and clang with -Wall -Wextra -Wshadow -pedantic, link no conv kernel, and
need no scratch.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.plugins import PluginHost
from plugins.generic_c.tests.float_conv_cases import ConvCase, conv_model
from deeploy_generic_c.kernels.direct_conv import DirectConv, interior_columns, takes_direct_path



CASES = {
    "peer-dw-strided": ConvCase(2, 4, (64, 32), (8, 8), {"pads": [1, 1, 1, 1], "strides": [2, 4], "group": 2}),
    "peer-regular-strided": ConvCase(2, 4, (64, 32), (8, 8), {"pads": [1, 1, 1, 1], "strides": [2, 4]}, bias=False),
    "cct-first": ConvCase(3, 8, (16, 16), (3, 3), {"pads": [1, 1, 1, 1]}, bias=False),
    "asymmetric-pads": ConvCase(4, 6, (13, 19), (3, 5), {"pads": [2, 3, 0, 1]}),
    "wide-pads-stride": ConvCase(3, 5, (11, 12), (5, 5), {"pads": [4, 4, 4, 4], "strides": [2, 3]}),
    "dilated": ConvCase(5, 3, (20, 23), (3, 3), {"pads": [2, 1, 2, 3], "dilations": [3, 2]}),
    "grouped-batch": ConvCase(8, 8, (9, 10), (3, 3), {"pads": [1, 1, 1, 1], "group": 4}, batch=2),
    "depthwise": ConvCase(6, 6, (12, 12), (3, 3), {"pads": [1, 1, 1, 1], "group": 6}, bias=False),
    "one-d": ConvCase(4, 5, (300,), (7,), {"pads": [3, 1], "strides": [2]}),
    "one-d-dilated": ConvCase(3, 2, (40,), (3,), {"pads": [4, 4], "dilations": [4]}, bias=False),
    "no-interior": ConvCase(2, 3, (4, 4), (5, 5), {"pads": [2, 2, 2, 2]}),
    "no-border": ConvCase(3, 4, (10, 10), (3, 3), {"strides": [2, 2]}),
    "pointwise": ConvCase(16, 8, (6, 6), (1, 1)),
    "same-upper": ConvCase(3, 7, (15, 15), (4, 4), {"auto_pad": "SAME_UPPER"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_direct_conv_matches_onnx_runtime(name: str, generic_c_host: PluginHost, runtime_cache: Path,
                                          tmp_path: Path) -> None:
    case = CASES[name]
    group = int(case.attrs.get("group", 1))
    assert takes_direct_path(case.filters, group)
    path = tmp_path / "conv.onnx"
    onnx.save(conv_model(case), path)
    data = {"x": np.random.default_rng(11).standard_normal((case.batch, case.channels, *case.spatial))
            .astype(np.float32)}
    compiled, result = validate_with_data(path, CompileOptions(platform="generic-c"), generic_c_host, data,
                                          atol=1e-4, rtol=1e-4, cache_dir=runtime_cache)
    assert all(c.ok for c in result.comparisons), result.comparisons
    assert compiled.report["layers"][0]["scratch_bytes"] == 0


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("name", ["asymmetric-pads", "grouped-batch", "one-d-dilated", "no-interior", "no-border"])
def test_direct_conv_compiles_warning_free_without_conv_kernel(name: str, compiler: str, generic_c_host: PluginHost,
                                                                tmp_path: Path) -> None:
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not installed")
    path = tmp_path / "conv.onnx"
    onnx.save(conv_model(CASES[name]), path)
    _, generated = compile_model(path, CompileOptions(platform="generic-c"), generic_c_host)
    folder = tmp_path / "out"
    generated.write(folder)
    network = (folder / "Network.c").read_text()
    assert "dcg_conv2d_f32" not in network
    subprocess.run([compiler, "-std=c99", "-O2", "-Wall", "-Wextra", "-Wshadow", "-pedantic", "-Werror",
                    f"-I{folder / 'runtime' / 'include'}", "-c", str(folder / "Network.c"), "-o",
                    str(tmp_path / "network.o")], check=True, capture_output=True, text=True)


def _layer(wd: int, kw: int, stride: int, pad: int, dil: int, ow: int) -> DirectConv:
    return DirectConv("x", "w", None, "y", 1, 1, 1, wd, 1, 1, kw, 1, ow, 1, stride, 0, pad, 1, dil, 1)


def test_interior_columns_are_exactly_the_unclipped_ones() -> None:
    for wd, kw, stride, pad, dil in ((32, 8, 4, 1, 1), (16, 3, 1, 1, 1), (4, 5, 1, 2, 1), (23, 3, 2, 3, 2),
                                     (10, 3, 2, 0, 1), (7, 7, 3, 6, 1)):
        ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
        lo, hi = interior_columns(_layer(wd, kw, stride, pad, dil, ow))
        inside = [o for o in range(ow) if o * stride - pad >= 0 and o * stride - pad + (kw - 1) * dil < wd]
        assert (lo, hi) == ((inside[0], inside[-1] + 1) if inside else (lo, lo)), (wd, kw, stride, pad, dil)


def test_many_filters_per_group_keep_the_im2col_path() -> None:
    assert not takes_direct_path(16, 1)
    assert takes_direct_path(16, 2)
