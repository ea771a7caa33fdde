"""L3 on pulp-cluster on networks built here: the L3 hop's buffering option, large activations, too-small levels.

* ``--option l3_buffering=double`` (the memory level's option) gives the L3
  hop two staging slots and a schedule that starts the next tile's L3 fetch
  before the current tile computes: the generated loop says so, the emulator
  counts the L3 bytes in flight while the cores computed
  (``dma_overlapped_bytes``), the report shows two slots and the cost model
  fewer cycles; ``single`` overlaps nothing.  The network: one MatMul whose
  1 MiB of weights cannot stay in the default 512 KiB L2.
* A network of 1 MiB activations runs with the default L2.
* A level too small, even with everything moved that can move, is one line
  naming the level and the bytes it needs, and that size then compiles.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain

ENV = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c,pulp-cluster", "COLUMNS": "200"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deeploy_core", *args], capture_output=True, text=True, env=ENV)


def _save(graph: onnx.GraphProto, path: Path) -> Path:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


@pytest.fixture(scope="module")
def heavy_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """y = x @ w with x 32 x 256 and w 256 x 1024 floats: 1 MiB of weights, tiled along w's columns."""
    w = (np.random.default_rng(0).standard_normal((256, 1024)) * 0.05).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")], "heavy_weights",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 1024])],
                              [numpy_helper.from_array(w, "w")])
    return _save(graph, tmp_path_factory.mktemp("model") / "heavy_weights.onnx")


@pytest.fixture(scope="module")
def large_activations(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three 1x1 convolutions with ReLU and a skip connection on 1 x 16 x 128 x 128 floats: 1 MiB per activation."""
    rng = np.random.default_rng(1)
    nodes, weights, previous = [], [], "x"
    for index in range(3):
        weights += [numpy_helper.from_array((rng.standard_normal((16, 16, 1, 1)) * 0.3).astype(np.float32), f"w{index}"),
                    numpy_helper.from_array((rng.standard_normal(16) * 0.1).astype(np.float32), f"b{index}")]
        nodes += [helper.make_node("Conv", [previous, f"w{index}", f"b{index}"], [f"c{index}"], name=f"conv{index}"),
                  helper.make_node("Relu", [f"c{index}"], [f"r{index}"], name=f"relu{index}")]
        previous = f"r{index}"
    nodes.append(helper.make_node("Add", [previous, "x"], ["y"], name="skip"))
    shape = [1, 16, 128, 128]
    graph = helper.make_graph(nodes, "large_activations", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], weights)
    return _save(graph, tmp_path_factory.mktemp("model") / "large_activations.onnx")


def _validate(model: Path, host: PluginHost, cache: Path, stats: Path, monkeypatch: pytest.MonkeyPatch,
              **options: object) -> tuple[dict, dict, str]:
    """(report, emulator statistics, Network.c) of a run compared with ONNX Runtime (float tolerance 1e-4)."""
    monkeypatch.setenv("PULP_EMULATOR_STATS", str(stats))
    generated, result = validate_model(model, CompileOptions(platform="pulp-cluster", options=dict(options)), host,
                                       atol=1e-4, rtol=1e-4, repeats=1, cache_dir=cache,
                                       toolchain=Toolchain.from_environment(extra_flags=strict_flags(())))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    report = generated.report
    assert json.loads(stats.read_text())["dma_bytes"] == {k: v for k, v in report["traffic"].items() if v}
    return report, json.loads(stats.read_text()), generated.files["Network.c"]


def test_double_buffering_of_the_l3_hop_overlaps_the_next_fetch_with_compute(
        heavy_weights: Path, cluster_host: PluginHost, runtime_cache: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    runs = {scheme: _validate(heavy_weights, cluster_host, runtime_cache, tmp_path / f"{scheme}.json", monkeypatch,
                              l3_buffering=scheme) for scheme in ("single", "double")}
    (single, single_stats, single_code), (double, double_stats, double_code) = runs["single"], runs["double"]
    for report, scheme in ((single, "single"), (double, "double")):
        assert report["options"]["memory_level"]["values"]["l3_buffering"] == scheme
        assert report["outer_level"]["tensors"] == ["w"] and report["outer_level"]["buffering"] == scheme
        assert report["memory_levels"]["L3"]["static"] == 256 * 1024 * 4
        [layer] = report["tiling"]["layers"]
        assert layer["tiles"] > 2 and layer["staging"]["buffers"]["in1"]["slots"] == (2 if scheme == "double" else 1)
        assert report["traffic"]["L3->L2"] == 256 * 1024 * 4 == layer["staging"]["bytes_in"]
    # The loop: single buffering fetches a tile's weights L3 -> L2 inside its fetch and waits at once; double
    # buffering has a fetch_outer function, and the loop starts the next tile's call of it before the compute.
    assert "_fetch_outer(" not in single_code
    loop = double_code[double_code.index("for (int32_t t = 0;"):]
    prefetch, barrier, compute = (loop.index(text) for text in ("_fetch_outer(row + ", "pulp_barrier();",
                                                                 "pulp_count_macs("))
    assert prefetch < barrier < compute
    # The emulator: with double buffering every L3 fetch but the first is in flight while the cores compute.
    assert single_stats["dma_overlapped_bytes"].get("L3->L2", 0) == 0
    first_tile = double["tiling"]["layers"][0]["buffers"]["in1"]["slot_bytes"]
    assert double_stats["dma_overlapped_bytes"]["L3->L2"] >= double["traffic"]["L3->L2"] - first_tile > 0
    assert double["memory_levels"]["L2"]["arena"] > single["memory_levels"]["L2"]["arena"]  # the second slot
    assert double["estimated_cycles"] < single["estimated_cycles"]


def test_activations_of_a_mebibyte_run_with_the_default_l2(large_activations: Path, cluster_host: PluginHost,
                                                           runtime_cache: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    report, _, _ = _validate(large_activations, cluster_host, runtime_cache, tmp_path / "stats.json", monkeypatch)
    levels = report["memory_levels"]
    assert levels["L2"]["capacity"] == 512 * 1024 and levels["L2"]["used"] <= 512 * 1024
    assert {"x", "y"} <= set(report["outer_level"]["tensors"]) and levels["L3"]["arena"] >= 2 * 1024 * 1024
    assert report["traffic"]["L3->L2"] >= 1024 * 1024 and report["traffic"]["L2->L3"] >= 1024 * 1024


def test_an_l3_too_small_is_one_line_naming_the_bytes_it_needs(heavy_weights: Path, tmp_path: Path) -> None:
    result = cli("compile", str(heavy_weights), "--platform", "pulp-cluster", "--l3", "100000", "-o",
                 str(tmp_path / "small"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    found = re.fullmatch(r"error: L3 needs at least (\d+) bytes \(arena \d+, tables 0, static 1048576\) but has 100000",
                         line)
    assert found, line
    again = cli("compile", str(heavy_weights), "--platform", "pulp-cluster", "--l3", found.group(1), "-o",
                str(tmp_path / "enough"))
    assert again.returncode == 0, again.stderr
    report = json.loads((tmp_path / "enough" / "report.json").read_text())
    assert report["memory_levels"]["L3"]["used"] == int(found.group(1))


def test_an_l2_too_small_for_the_staging_buffers_is_one_line_naming_the_bytes_it_needs(heavy_weights: Path,
                                                                                      tmp_path: Path) -> None:
    result = cli("compile", str(heavy_weights), "--platform", "pulp-cluster", "--l2", "4096", "-o",
                 str(tmp_path / "small"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    found = re.fullmatch(r"error: L2 needs at least (\d+) bytes \(staging buffers, tables \d+; the largest staging "
                         r"block \d+\) but has 4096, even with every tensor in L3", line)
    assert found, line
    again = cli("compile", str(heavy_weights), "--platform", "pulp-cluster", "--l2", found.group(1), "-o",
                str(tmp_path / "enough"))
    assert again.returncode == 0, again.stderr
    report = json.loads((tmp_path / "enough" / "report.json").read_text())
    assert report["memory_levels"]["L2"]["used"] <= int(found.group(1))
    assert "w" in report["outer_level"]["tensors"]


def test_l3_buffering_is_checked_like_every_option(heavy_weights: Path, tmp_path: Path) -> None:
    result = cli("compile", str(heavy_weights), "--platform", "pulp-cluster", "--option", "l3_buffering=triple",
                 "-o", str(tmp_path / "out"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "l3_buffering" in result.stderr and "single, double" in result.stderr
