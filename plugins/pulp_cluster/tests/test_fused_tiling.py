"""Fused (multi-layer) tiling on the cluster (issue 22, items 1, 2 and 4).

* On Deeploy's CNNs (miniMobileNet, KeywordSpotting and the three MLPerf
  networks) at L1 = 32 000 bytes, fusion moves at least 30 % fewer bytes
  between L2 and L1 than layer-wise tiling on at least three of them, and
  never more on any (compiles only: the traffic is the compiler's figure,
  which test_traffic_counted.py and test_peer_cluster.py check against the
  emulator's DMA counters for fused compiles).
* ``--fusion none`` really tiles layer by layer, and a fused compile runs
  bit-exactly and moves what it reports, for both fusion settings, single and
  double buffered.
* ``--tiling-from`` reproduces a fused compile's code.

Every peer network runs fused (the default) at L1 64 000 and 16 000, single
and double buffered, in test_peer_cluster.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root
from deeploy_core.validate import Toolchain

ROOT = peer_tests_root(Path(__file__).parent)
MLPERF = ROOT.parent.parent / "bench" / "deeploy-mlperf" if ROOT else None
MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy and ../shared/bench/deeploy-mlperf are missing"
CNN_PEERS = ("Models/miniMobileNet", "Models/MLPerf/KeywordSpotting")
CNN_MLPERF = ("AnomalyDetection", "ImageClassification", "VisualWakeWords")


def cnn_networks() -> list[PeerTest]:
    if ROOT is None or MLPERF is None or not MLPERF.is_dir():
        return []
    peers = [peer for peer in find_peer_tests(ROOT) if peer.name in CNN_PEERS]
    return peers + [peer for peer in find_peer_tests(MLPERF) if peer.name in CNN_MLPERF]


def options(peer: PeerTest, l1: int, buffering: str, fusion: str) -> CompileOptions:
    return CompileOptions(platform="pulp-cluster", input_types=peer.input_types(), level_sizes={"L1": l1},
                          buffering=buffering, cores=8, fusion=fusion)


def l2_l1_traffic(report: dict) -> int:
    return int(report["traffic"]["L2->L1"] + report["traffic"]["L1->L2"])


@pytest.mark.skipif(not cnn_networks(), reason=MISSING)
def test_fusion_cuts_the_traffic_of_the_cnns_and_never_adds_any(cluster_host: PluginHost) -> None:
    networks = cnn_networks()
    assert sorted(peer.name for peer in networks) == sorted(CNN_PEERS + CNN_MLPERF)
    reductions = {}
    for peer in networks:
        _, layerwise = compile_model(peer.model, options(peer, 32000, "single", "none"), cluster_host)
        _, fused = compile_model(peer.model, options(peer, 32000, "single", "auto"), cluster_host)
        assert layerwise.report["tiling"]["patterns"] == [] and layerwise.report["tiling"]["fusion"] == "none"
        before, after = l2_l1_traffic(layerwise.report), l2_l1_traffic(fused.report)
        assert after <= before, f"{peer.name}: fused tiling moves {after} bytes, layer-wise {before}"
        reductions[peer.name] = 1 - after / before
        patterns = fused.report["tiling"]["patterns"]
        layers = {layer["key"]: layer for layer in fused.report["tiling"]["layers"]}
        for pattern in patterns:  # a pattern moves what its layers move; intermediates move nothing
            assert pattern["bytes_in"] == sum(layers[key]["bytes_in"] for key in pattern["keys"])
            assert pattern["bytes_out"] == layers[pattern["keys"][-1]]["bytes_out"]
            assert all(layers[key]["bytes_out"] == 0 for key in pattern["keys"][:-1])
        assert fused.report["level_peaks"]["L1"] <= 32000
        intermediates = {key for pattern in patterns for key in pattern["keys"][:-1]}
        if peer.name == "ImageClassification":  # no home storage for the intermediates: a smaller L2 peak
            assert fused.report["level_peaks"]["L2"] < layerwise.report["level_peaks"]["L2"]
        assert len(intermediates) == sum(len(pattern["keys"]) - 1 for pattern in patterns)
    assert sum(reduction >= 0.30 for reduction in reductions.values()) >= 3, reductions


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("fusion", ["none", "auto"])
@pytest.mark.parametrize("buffering", ["single", "double"])
def test_both_fusion_settings_run_exactly_and_move_what_they_report(
        fusion: str, buffering: str, cluster_host: PluginHost, runtime_cache: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    peer = next(peer for peer in find_peer_tests(ROOT) if peer.name == "Models/MLPerf/KeywordSpotting")
    stats_file = tmp_path / "stats.json"
    monkeypatch.setenv("PULP_EMULATOR_STATS", str(stats_file))
    generated, result = validate_model(peer.model, options(peer, 16000, buffering, fusion), cluster_host,
                                       inputs_npz=peer.inputs, outputs_npz=peer.outputs, repeats=1,
                                       cache_dir=runtime_cache,
                                       toolchain=Toolchain.from_environment(extra_flags=strict_flags(())))
    assert result.ok, [(c.name, c.mismatches) for c in result.comparisons]
    report = generated.report
    patterns = report["tiling"]["patterns"]
    assert (len(patterns) > 0) == (fusion == "auto")
    counted = json.loads(stats_file.read_text())["dma_bytes"]
    assert {link: counted.get(link, 0) for link in report["traffic"]} == report["traffic"]
    code = "\n".join(text for name, text in generated.files.items() if name.endswith(".c"))
    assert ("fused pattern" in code) == (fusion == "auto")
    # A fused intermediate has no place at home: it is neither in the arena plan nor given a pointer.
    planned = {buffer["name"] for buffer in report["memory"]["buffers"]}
    intermediates = [name for pattern in patterns for name in _outputs(report, pattern["layers"][:-1])]
    if fusion == "auto":
        assert intermediates and not set(intermediates) & planned
    else:
        assert not intermediates
    assert code.count("no home storage") == len(intermediates)


@pytest.mark.skipif(ROOT is None, reason=MISSING)
def test_a_fused_tiling_is_reproduced_from_its_report(cluster_host: PluginHost, tmp_path: Path) -> None:
    peer = next(peer for peer in find_peer_tests(ROOT) if peer.name == "Models/miniMobileNet")
    first_dir = tmp_path / "first"
    _, first = compile_model(peer.model, options(peer, 16000, "double", "auto"), cluster_host)
    assert first.report["tiling"]["solution"]["patterns"], "miniMobileNet fuses at L1 16000"
    first_dir.mkdir()
    (first_dir / "report.json").write_text(json.dumps(first.report), encoding="utf-8")
    reuse = CompileOptions(platform="pulp-cluster", input_types=peer.input_types(), level_sizes={"L1": 16000},
                           buffering="double", cores=8, fusion="auto", tiling_from=first_dir / "report.json")
    _, again = compile_model(peer.model, reuse, cluster_host)
    assert again.report["tiling"]["solution"] == first.report["tiling"]["solution"]
    assert again.report["tiling"]["memory_map"] == first.report["tiling"]["memory_map"]
    assert again.report["traffic"] == first.report["traffic"]
    assert again.files == first.files


@pytest.mark.skipif(ROOT is None, reason=MISSING)
def test_analyze_and_the_memory_plot_show_the_fused_patterns(cluster_host: PluginHost) -> None:
    from deeploy_core.cli.level_traffic_text import patterns_table
    from deeploy_core.report.plot_levels import memory_plot_levels

    peer = next(peer for peer in find_peer_tests(ROOT) if peer.name == "Models/miniMobileNet")
    deployer, generated = compile_model(peer.model, options(peer, 16000, "single", "auto"), cluster_host)
    patterns = generated.report["tiling"]["patterns"]
    table = patterns_table(generated.report)
    assert table is not None and len(table.rows) == len(patterns) >= 1
    assert table.rows[0][0] == " -> ".join(patterns[0]["layers"])
    l1 = next(level for level in memory_plot_levels(deployer.compilation) if level.name == "L1")
    fused = [block for block in l1.blocks if block.name.startswith("fused 1 (")]
    assert {block.name.split(": ", 1)[1].split(" ")[0] for block in fused} == set(patterns[0]["layers"])
    _, layerwise = compile_model(peer.model, options(peer, 16000, "single", "none"), cluster_host)
    assert patterns_table(layerwise.report) is None


@pytest.mark.skipif(ROOT is None, reason=MISSING)
def test_a_fused_pattern_that_fails_late_falls_back_to_layer_wise_with_a_warning(
        cluster_host: PluginHost, monkeypatch: pytest.MonkeyPatch) -> None:
    from deeploy_core.errors import DeeployError
    from deeploy_core.tiling.fusion.planner import FusionPlanner

    def refuse(self, pattern, tile):  # noqa: ANN001, ANN202 - stands in for a kernel refusing a halo tile
        raise DeeployError(f"layer {pattern.layers[0].name!r}: its kernel rejects the tile (1, 2, 3)")

    peer = next(peer for peer in find_peer_tests(ROOT) if peer.name == "Models/miniMobileNet")
    _, layerwise = compile_model(peer.model, options(peer, 16000, "single", "none"), cluster_host)
    monkeypatch.setattr(FusionPlanner, "tiled_layers", refuse)
    _, fallback = compile_model(peer.model, options(peer, 16000, "single", "auto"), cluster_host)
    assert fallback.report["tiling"]["patterns"] == [] and "patterns" not in fallback.report["tiling"]["solution"]
    assert [w for w in fallback.report["warnings"] if w.startswith("fused tiling given up")] == [
        "fused tiling given up, every layer tiled alone: layer 'Conv_0_rq': its kernel rejects the tile (1, 2, 3)"]
    assert fallback.report["traffic"] == layerwise.report["traffic"]
    assert fallback.report["memory"] == layerwise.report["memory"], "the arena is planned layer by layer again"
    assert fallback.files["Network.c"] == layerwise.files["Network.c"]


def _outputs(report: dict, layer_names: list[str]) -> list[str]:
    """The output tensor names of the named layers (report.json's ``layers``)."""
    by_name = {layer["node"]: layer for layer in report["layers"]}
    return [output["name"] for name in layer_names for output in by_name[name]["outputs"]]


def test_double_buffered_l3_unfuses_staging_patterns_only_where_the_layers_fit(cluster_host: PluginHost,
                                                                               tmp_path: Path) -> None:
    """The example CNN at an L2 of 64 KiB stages tensors through L2: its layers alone would need more L2 for the
    second staging slots, so its patterns stay fused (single buffered on the L3 hop) and a warning says so."""
    import subprocess
    import sys

    model = tmp_path / "cnn.onnx"
    subprocess.run([sys.executable, str(Path(__file__).parents[3] / "examples" / "make_tiny_cnn.py"), str(model)],
                   check=True, capture_output=True)
    _, generated = compile_model(model, CompileOptions(platform="pulp-cluster", level_sizes={"L2": 65536},
                                                       options={"l3_buffering": "double"}), cluster_host)
    report = generated.report
    assert report["outer_level"]["buffering"] == "double" and report["tiling"]["patterns"]
    warnings = [w for w in report["warnings"] if w.startswith("L3 double buffering: ")]
    assert len(warnings) == 1 and "keep single buffering of the L3 hop" in warnings[0]
    assert "L2 needs at least" in warnings[0]
