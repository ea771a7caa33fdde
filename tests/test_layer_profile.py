"""The per-layer profile (issue 33): ``validate --profile``, ``make profile`` in an output folder, and the clock
reads that exist only in a profile build."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.codegen.api_names import NetworkApi
from deeploy_core.plugins import PluginHost
from deeploy_core.report.layer_profile import layer_profile
from deeploy_core.report.profile_page import GENERATOR
from deeploy_core.testing.peer_tests import peer_tests_root
from deeploy_core.testing.terminal import run_piped

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")

PEER_ROOT = peer_tests_root(Path(__file__).parent)
KWS = PEER_ROOT / "Models" / "MLPerf" / "KeywordSpotting" if PEER_ROOT else None
NEEDS_KWS = pytest.mark.skipif(KWS is None or not KWS.is_dir(),
                               reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
KWS_LAYERS = ("Conv_16_rq", "Conv_18_rq", "Conv_20_rq", "Conv_22_rq", "Conv_24_rq", "Conv_26_rq", "Conv_28_rq",
              "Conv_30_rq", "Conv_32_rq", "MaxPool_34", "Reshape_36", "Gemm_37_rq")
ROW = re.compile(r"^(?P<layer>\S.*?)\s{2,}(?P<op>\S.*?)\s{2,}(?P<kernel>\S.*?)\s{2,}(?P<macs>[\d,]+)\s+(?P<us>[\d.]+)\s+"
                 r"(?P<share>[\d.]+)(?:\s+(?P<cycles>[\d,]+|-)\s+(?P<ratio>[\d.]+|-))?$")


def table_rows(stdout: str, title: str) -> list[re.Match[str]]:
    """The rows of the per-layer table printed after ``title``."""
    lines = stdout.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 3:]:
        match = ROW.match(line)
        if match is None:
            break
        rows.append(match)
    return rows


@pytest.fixture(scope="module")
def heavy_middle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Relu → a 1x768 by 768x768 MatMul (590k MACs) → Relu: nearly all the time is the middle layer's."""
    rng = np.random.default_rng(5)
    weights = numpy_helper.from_array(rng.standard_normal((768, 768)).astype(np.float32) / 32, "w")
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"], name="first_relu"),
         helper.make_node("MatMul", ["a", "w"], ["b"], name="the_matmul"),
         helper.make_node("Relu", ["b"], ["y"], name="last_relu")],
        "heavy_middle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 768])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 768])], [weights])
    path = tmp_path_factory.mktemp("heavy") / "heavy_middle.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_the_heaviest_layer_gets_the_time(heavy_middle: Path, tmp_path: Path) -> None:
    """Each time lands on its own layer: a mark one layer off would give the MatMul's time to a Relu."""
    host = PluginHost.discover()
    generated, result = validate_model(heavy_middle, CompileOptions(platform="generic-c"), host, repeats=5,
                                       profile=True, cache_dir=tmp_path / "cache")
    assert result.ok
    profile = layer_profile(generated.report, result.layer_ns, 5)
    by_name = {row.label: row for row in profile.rows}
    assert list(by_name) == ["first_relu", "the_matmul", "last_relu"]
    assert by_name["the_matmul"].macs == 768 * 768
    assert profile.share(by_name["the_matmul"]) > 80.0, profile.rows
    assert all(row.ns > 0 for row in profile.rows)
    assert profile.total_ns <= result.best_ns * 1.5


def test_without_profile_no_layer_is_timed(heavy_middle: Path, tmp_path: Path) -> None:
    _, result = validate_model(heavy_middle, CompileOptions(platform="generic-c"), PluginHost.discover(), repeats=1,
                               cache_dir=tmp_path / "cache")
    assert result.ok and result.layer_ns == ()


@pytest.mark.parametrize("prefix", [None, "kws"])
def test_the_marks_are_compiled_in_only_with_dc_profile(heavy_middle: Path, tmp_path: Path, prefix: str | None) -> None:
    """A firmware build of Network.c references no profile function; ``-DDC_PROFILE`` makes it call the
    application's (renamed by --prefix) once per layer and once after the last."""
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed")
    _, generated = compile_model(heavy_middle, CompileOptions(platform="generic-c", c_api=NetworkApi(prefix=prefix)),
                                 PluginHost.discover())
    generated.write(tmp_path)
    mark = f"{prefix}_profile_mark" if prefix else "DeeployNetwork_profile_mark"
    assert re.findall(r"DC_PROFILE_MARK\((\d+)u\);", generated.files["Network.c"]) == ["0", "1", "2", "3"]
    symbols = {}
    for flags in ((), ("-DDC_PROFILE",)):
        obj = tmp_path / f"network{len(flags)}.o"
        subprocess.run(["cc", "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror", *flags, "-I", str(tmp_path),
                        "-I", str(tmp_path / "runtime" / "include"), "-c", str(tmp_path / "Network.c"), "-o", str(obj)],
                       check=True)
        symbols[flags] = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    assert mark not in symbols[()]
    assert re.search(rf"^\s+U {mark}$", symbols[("-DDC_PROFILE",)], re.M)


@NEEDS_KWS
def test_validate_profile_on_keyword_spotting(tmp_path: Path) -> None:
    """Done-when: the table names every layer by its ONNX node, with op, kernel, MACs, time and share."""
    page = tmp_path / "kws.html"
    done = run_piped("validate", str(KWS), "--profile", "--profile-html", str(page), "--build-dir",
                     str(tmp_path / "build"), plugins="generic-c")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "build" / "report.json").read_text())
    rows = table_rows(done.stdout, "per-layer time of KeywordSpotting on generic-c")
    assert [row["layer"] for row in rows] == list(KWS_LAYERS)
    for row, layer in zip(rows, report["layers"]):
        assert (row["op"], row["kernel"]) == (layer["op"], layer["kernel"])
        assert int(row["macs"].replace(",", "")) == layer["macs"]
    assert all(float(row["us"]) > 0 for row in rows if row["op"] == "RequantizedConv")
    assert abs(sum(float(row["share"]) for row in rows) - 100.0) < 0.5
    assert "no MAC/cycle column: the host build reads a clock, not a cycle counter" in done.stdout
    assert f"wrote {page}" in done.stdout
    text = page.read_text()
    assert GENERATOR in text and "<title>Per-layer profile of KeywordSpotting on generic-c</title>" in text
    assert all(f'<span class="node">{name}</span>' in text for name in KWS_LAYERS)


@NEEDS_KWS
def test_validate_profile_on_a_tiled_cluster_build(tmp_path: Path) -> None:
    """Done-when: on pulp-cluster the cost model's cycles per layer stand beside the host time; fused layers are
    one row, timed together, and their estimate is the sum of theirs."""
    pytest.importorskip("deeploy_pulp_cluster", reason="the cluster platform (plugins/pulp_cluster) is not installed")
    page = tmp_path / "profile.html"
    done = run_piped("validate", str(KWS), "--platform", "pulp-cluster", "--l1", "32KiB", "--profile",
                     "--profile-html", str(page), "--build-dir", str(tmp_path / "build"), plugins="generic-c,pulp-cluster")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "build" / "report.json").read_text())
    rows = table_rows(done.stdout, "per-layer time of KeywordSpotting on pulp-cluster")
    cycles = {entry["key"]: cost["cycles"] for entry, cost in zip(report["tiling"]["layers"],
                                                                    report["estimate"]["layers"])}
    fused = [pattern["keys"] for pattern in report["tiling"]["patterns"]]
    keys_by_node = {layer["node"]: layer["key"] for layer in report["layers"]}
    timed = 0
    for row in rows:
        first = row["layer"].split(" … ")[0]
        group = next((keys for keys in fused if keys[0] == keys_by_node[first]), [keys_by_node[first]])
        assert row["layer"].endswith(f"({len(group)} fused)") == (len(group) > 1)
        estimate = sum(cycles.get(key, 0) for key in group)
        assert row["cycles"] == (f"{estimate:,}" if any(key in cycles for key in group) else "-")
        timed += len(group)
    assert timed == len(report["layers"]) == len(KWS_LAYERS)
    assert "est. cycles: pulp-cluster's cost model (target); µs: this host (emulated)" in done.stdout
    text = page.read_text()
    assert "(L1 32768 B, single buffering, 8 cores)" in text
    assert 'class="bar estimate"' in text and "est. cycles</span>" in text


def test_a_file_that_is_not_a_profile_page_is_never_replaced(heavy_middle: Path, tmp_path: Path) -> None:
    notes = tmp_path / "profile.html"
    notes.write_text("<p>my notes</p>\n")
    done = run_piped("validate", str(heavy_middle), "--profile", "--profile-html", str(notes), plugins="generic-c")
    assert done.returncode != 0
    assert notes.read_text() == "<p>my notes</p>\n"
    assert "is not a profile page written by deeploy-core" in done.stderr and "Traceback" not in done.stderr
    page = tmp_path / "mine.html"
    for _ in range(2):  # the second run replaces the page the first wrote
        done = run_piped("validate", str(heavy_middle), "--profile", "--profile-html", str(page), plugins="generic-c")
        assert done.returncode == 0, done.stderr
    assert "the_matmul" in page.read_text()


def make_profile(folder: Path, *args: str) -> str:
    done = subprocess.run(["make", "-s", "-C", str(folder), "profile", "CFLAGS=-O2 -Wall -Wextra -Werror", *args],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@NEEDS_KWS
def test_make_profile_in_the_output_folder(tmp_path: Path) -> None:
    """The folder alone (make and a C compiler) prints the table on the self-test's inputs; REPEATS counts."""
    out = tmp_path / "kws"
    done = run_piped("compile", str(KWS), "-o", str(out), plugins="generic-c")
    assert done.returncode == 0, done.stderr
    stdout = make_profile(out, "REPEATS=3")
    assert "per-layer time of network on generic-c (best of 3 run(s) per layer, inputs of the self-test)" in stdout
    rows = table_rows(stdout, "per-layer time of network")
    assert [row["layer"] for row in rows] == list(KWS_LAYERS)
    assert abs(sum(float(row["share"]) for row in rows) - 100.0) < 0.5
    assert "best of 10 run(s)" in make_profile(out)
    make_test = subprocess.run(["make", "-s", "-C", str(out), "test"], capture_output=True, text=True)
    assert make_test.returncode == 0 and "self-test passed" in make_test.stdout


@pytest.mark.parametrize("arena", ["static", "user"])
def test_make_profile_without_sample_data_and_with_a_prefix(heavy_middle: Path, tmp_path: Path, arena: str) -> None:
    out = tmp_path / "out"
    done = run_piped("compile", str(heavy_middle), "-o", str(out), "--prefix", "net", "--arena", arena,
                     plugins="generic-c")
    assert done.returncode == 0, done.stderr
    stdout = make_profile(out, "REPEATS=2")
    assert "(best of 2 run(s) per layer, inputs all zero)" in stdout
    assert [row["layer"] for row in table_rows(stdout, "per-layer time of heavy_middle")] == [
        "first_relu", "the_matmul", "last_relu"]
    assert "net_profile_mark" in (out / "Network.h").read_text()
