"""report.json's ``traffic`` is what the cluster's DMA really moves (issue 22, item 4).

Real tiled networks (two integer CNNs and a float transformer from Deeploy's
peer tests) are compiled for pulp-cluster at L1 = 64 000 and 16 000 bytes
(sizes that are no power of two, so tiles are cut unevenly), with single and
double buffering, then built against the host emulation runtime and run once.
The emulator counts at every ``pulp_dma_wait`` the bytes that transfer copied,
per (source, destination) level, and writes the counters to
``PULP_EMULATOR_STATS`` at exit: those counts must equal ``traffic`` exactly,
link by link, and the outputs must match the golden ones (a schedule that
moved the right number of bytes to the wrong place would fail there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.validate import Toolchain

ROOT = peer_tests_root(Path(__file__).parent)
NETWORKS = ("Models/miniMobileNet", "Models/MLPerf/KeywordSpotting", "Models/CCT/FP32/CCT_1_16_16_8")
PEERS = [peer for peer in (find_peer_tests(ROOT) if ROOT else []) if peer.name in NETWORKS]
MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy (or $DEEPLOY_CORE_PEER_TESTS) is missing"
CLUSTER_LINKS = {"L1->L2", "L2->L1", "L2->L3", "L3->L2"}
"""Every directed link of the cluster's L3 <-> L2 <-> L1 hierarchy: the keys ``traffic`` always has."""


def test_the_three_networks_are_there() -> None:
    """The parametrised test below would silently shrink if a network were renamed in the peer tests."""
    if ROOT is None:
        pytest.skip(MISSING)
    assert sorted(peer.name for peer in PEERS) == sorted(NETWORKS)


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("buffering", ["single", "double"])
@pytest.mark.parametrize("l1", [64000, 16000])
@pytest.mark.parametrize("peer", PEERS, ids=[peer.name for peer in PEERS])
def test_counted_dma_bytes_equal_the_reported_traffic(peer, l1: int, buffering: str, cluster_host: PluginHost,
                                                      runtime_cache: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    stats_file = tmp_path / "stats.json"
    monkeypatch.setenv("PULP_EMULATOR_STATS", str(stats_file))
    tolerance = 1e-4 if peer.is_float else 0.0
    options = CompileOptions(platform="pulp-cluster", input_types=peer.input_types(), level_sizes={"L1": l1},
                             buffering=buffering, cores=8)
    generated, result = validate_model(peer.model, options, cluster_host, inputs_npz=peer.inputs,
                                       outputs_npz=peer.outputs, atol=tolerance, rtol=tolerance, repeats=1,
                                       cache_dir=runtime_cache,
                                       toolchain=Toolchain.from_environment(extra_flags=strict_flags(())))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    report = generated.report
    traffic = report["traffic"]
    assert set(traffic) == CLUSTER_LINKS
    assert traffic["L2->L1"] > 0 and traffic["L1->L2"] > 0, "a tiled network moves tiles both ways"
    assert traffic["L3->L2"] == traffic["L2->L3"] == 0, "nothing lives in L3 yet"
    counted = json.loads(stats_file.read_text())["dma_bytes"]
    assert set(counted) <= CLUSTER_LINKS, counted
    assert {link: counted.get(link, 0) for link in CLUSTER_LINKS} == traffic
    tiled_layers = report["tiling"]["layers"]
    if l1 == 16000 and peer.name != "Models/miniMobileNet":  # miniMobileNet's layers fit L1 16000 whole
        assert any(layer["tiles"] > 1 for layer in tiled_layers), "L1 16000 must split some layer into tiles"
    peaks = report["level_peaks"]
    assert set(peaks) == {"L1", "L2", "L3"} and peaks["L3"] == 0
    assert max(layer["level_bytes"] for layer in tiled_layers) <= peaks["L1"] <= l1
    assert peaks["L1"] == report["memory_levels"]["L1"]["used"]
    assert peaks["L2"] == report["memory_levels"]["L2"]["used"] <= report["memory_levels"]["L2"]["capacity"]
    assert report["estimated_cycles"] == report["estimate"]["cycles"] > 0
