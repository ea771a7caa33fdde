"""Every peer network at each L1 size Deeploy's Siracusa tiled tests use for it (issue 32), validated on the cluster.

The sizes are in plugins/pulp_cluster/tests/siracusa_l1_sizes.py.  Each compile is built against the
host emulation runtime, whose L1 is a bounded memory of exactly that size, and
run on the peer's inputs: float outputs within the FP32 tolerance, integer
outputs bit for bit, and the reported L1 use within the size.  The smallest
sizes are where a layer's tiles fit only with its tile table left in L2 and
its buffers aligned to their element type (a float ReLU double-buffered in
20 bytes, a float convolution whose per-core im2col column is most of L1).

The default profile runs the configurations that exercise those two paths; the
whole matrix (113 configurations) runs with ``-m heavy_model``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

from plugins.pulp_cluster.tests.siracusa_l1_sizes import configurations

ROOT = peer_tests_root(Path(__file__).parent)
PEERS = {test.name: test for test in find_peer_tests(ROOT)} if ROOT else {}
MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"
HOME_TABLES = {("Kernels/FP32/ReLU", 20, "double"), ("Kernels/FP32/Conv/Regular_2D_NoBias", 1600, "single")}
"""Configurations whose tiles fit only with the tile tables left in L2."""
DEFAULT = HOME_TABLES | {("Models/miniMobileNet", 3000, "single"), ("Kernels/Integer/Softmax/Regular", 300, "single")}
"""Run by default: the smallest sizes, where tables stay in L2 or tile buffers need word alignment to fit."""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deeploy_core", *args], capture_output=True, text=True, check=False)


def _case(name: str, l1: int, buffering: str) -> object:
    marks = [] if (name, l1, buffering) in DEFAULT else [
        pytest.mark.heavy_model(reason="the rest of Deeploy's Siracusa L1 sizes")]
    return pytest.param(name, l1, buffering, id=f"{name}-{l1}-{buffering}", marks=marks)


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize(("name", "l1", "buffering"), [_case(*case) for case in configurations()])
def test_peer_validates_at_deeploys_siracusa_l1_size(name: str, l1: int, buffering: str, cluster_host: PluginHost,
                                                     runtime_cache: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    stats_file = tmp_path / "stats.json"
    monkeypatch.setenv("PULP_EMULATOR_STATS", str(stats_file))
    peer = PEERS[name]
    options = CompileOptions(platform="pulp-cluster", input_types=peer.input_types(), level_sizes={"L1": l1},
                             buffering=buffering, cores=8)
    tolerance = 1e-4 if peer.is_float else 0.0
    generated, result = validate_model(peer.model, options, cluster_host, inputs_npz=peer.inputs,
                                       outputs_npz=peer.outputs, atol=tolerance, rtol=tolerance, repeats=1,
                                       cache_dir=runtime_cache)
    for comparison in result.comparisons:
        assert comparison.ok, f"{comparison.name}: {comparison.mismatches}/{comparison.size} elements differ"
    level = generated.report["memory_levels"]["L1"]
    assert level["capacity"] == l1 and level["used"] <= l1, level
    measured = json.loads(stats_file.read_text())  # the emulator's DMA counts: what the report says moves
    assert measured["dma_bytes"] == {k: v for k, v in generated.report["traffic"].items() if v}
    if (name, l1, buffering) in DEFAULT:  # tables stay in L2 only where the tiles cannot fit beside them
        tiling = generated.report["tiling"]
        in_l2 = {layer["key"] for layer in tiling["layers"] if layer["table_level"] == "L2"}
        assert in_l2 == set(tiling["solution"].get("home_tables", ()))
        assert bool(in_l2) == ((name, l1, buffering) in HOME_TABLES)


def test_every_listed_network_is_a_peer_test() -> None:
    """A renamed or missing peer folder must not shrink the matrix unnoticed."""
    if ROOT is None:
        pytest.skip(MISSING)
    assert {name for name, _, _ in configurations()} <= set(PEERS)


def test_tables_left_in_l2_are_part_of_the_reused_solution(tmp_path: Path) -> None:
    """``--tiling-from`` a report whose layers read their tables from L2 reproduces the same code and report."""
    if ROOT is None:
        pytest.skip(MISSING)
    peer = PEERS["Kernels/FP32/ReLU"]
    common = ("--platform", "pulp-cluster", "--l1", "20", "--buffering", "double")
    first = cli("compile", str(peer.model), "-o", str(tmp_path / "first"), *common)
    assert first.returncode == 0, first.stderr
    report = json.loads((tmp_path / "first" / "report.json").read_text())
    assert report["tiling"]["solution"]["home_tables"] == [report["tiling"]["layers"][0]["key"]]
    again = cli("compile", str(peer.model), "-o", str(tmp_path / "again"), *common,
                "--tiling-from", str(tmp_path / "first" / "report.json"))
    assert again.returncode == 0, again.stderr
    for name in ("Network.c", "report.json"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name
    code = (tmp_path / "first" / "Network.c").read_text()
    assert "table_bytes" not in code, "the table is read in place, never copied into L1"
