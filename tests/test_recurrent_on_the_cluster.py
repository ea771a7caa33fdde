"""An LSTM keyword spotter with hidden 128 on the cluster's defaults (issue 32): gate weights read in place from L2.

The recurrent weight ``R`` of an LSTM is ``[1, 4·hidden, hidden]`` floats,
256 KiB at hidden 128, and every tile of the (untiled) recurrence reads it
whole, so it can never be copied into a 64 KiB L1.  The tiler falls back to
reading the fewest, largest such constants in place from L2.  These tests run
the exported PyTorch model (Conv1d front end over 49 frames of 10 features,
LSTM, linear head) through the emulator and compare with ONNX Runtime, and
check that the weights really stay in L2: the DMA bytes the emulator counts
equal the report's traffic, which is less than ``R`` alone; with a smaller L2
the constants that move to L3 are others, never one a kernel reads in place.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin

HIDDEN, FEATURES, FRAMES = 128, 10, 49


@pytest.fixture(scope="module")
def keyword_spotter(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray]]:
    """The exported network and one input (seeded)."""
    torch = pytest.importorskip("torch", reason="exporting the keyword spotter needs torch")
    from tests.models.small_networks import KeywordSpotter

    torch.manual_seed(32)
    module = KeywordSpotter(features=FEATURES, hidden=HIDDEN).eval()
    example = torch.randn(1, FEATURES, FRAMES)
    path = tmp_path_factory.mktemp("kws") / "keyword_spotter_128.onnx"
    torch.onnx.export(module, (example,), str(path), dynamo=False, opset_version=17, input_names=["frames"])
    return path, {"frames": example.numpy()}


@pytest.fixture(scope="module")
def cluster_host() -> PluginHost:
    host = PluginHost()
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return host


def recurrent_weight(model: Path) -> tuple[str, int]:
    """(name, bytes) of the LSTM's R input."""
    graph = onnx.load(model).graph
    lstm = next(node for node in graph.node if node.op_type == "LSTM")
    weight = next(init for init in graph.initializer if init.name == lstm.input[2])
    return weight.name, int(np.prod(weight.dims)) * 4


@pytest.mark.parametrize(("buffering", "l2"), [("single", None), ("double", 320_000)],
                         ids=["defaults", "double-buffered-L2-320000"])
def test_the_lstm_runs_on_the_defaults_reading_its_gate_weights_from_l2(
        keyword_spotter: tuple[Path, dict[str, np.ndarray]], cluster_host: PluginHost, buffering: str,
        l2: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, inputs = keyword_spotter
    stats = tmp_path / "stats.json"
    monkeypatch.setenv("PULP_EMULATOR_STATS", str(stats))
    options = CompileOptions(platform="pulp-cluster", buffering=buffering, level_sizes={"L2": l2} if l2 else {})
    generated, result = validate_with_data(model, options, cluster_host, inputs, repeats=1,
                                           toolchain=Toolchain.from_environment())
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    report = generated.report
    r_name, r_bytes = recurrent_weight(model)
    assert r_bytes == 4 * HIDDEN * HIDDEN * 4 > report["cluster"]["level_sizes"]["L1"]
    lstm = next(layer for layer in report["tiling"]["layers"] if layer["op"] == "LSTM")
    assert r_name in lstm["read_in_place"] and lstm["table_level"] == "L2"
    assert lstm["whole_axes"] and all("recurrence" in why for why in lstm["whole_axes"].values())
    chosen = report["tiling"]["solution"]["home_inputs"]
    assert list(chosen) == [lstm["key"]] and sorted(chosen[lstm["key"]]) == sorted(lstm["read_in_place"])
    counted = json.loads(stats.read_text())["dma_bytes"]
    assert counted.get("L2->L1", 0) == report["traffic"]["L2->L1"] < r_bytes, "R never moves into L1"
    moved = report.get("outer_level", {}).get("tensors", [])
    if l2 is None:
        assert moved == []
    else:  # too small for every constant: others go to L3, the ones read in place stay in L2
        assert moved and not set(moved) & set(lstm["read_in_place"])
        assert counted.get("L3->L2", 0) > 0


def test_a_reused_tiling_keeps_the_weights_read_in_place(keyword_spotter: tuple[Path, dict[str, np.ndarray]],
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--tiling-from`` reproduces the code, and a solution naming an input that may not stay in L2 is refused."""
    model, _ = keyword_spotter
    monkeypatch.delenv("DEEPLOY_CORE_PLUGINS")  # the command line as a user runs it: installed plugins

    def compile_to(folder: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(model), "-o", str(tmp_path / folder),
                               "--platform", "pulp-cluster", *extra], capture_output=True, text=True, check=False)

    first = compile_to("first")
    assert first.returncode == 0, first.stderr
    again = compile_to("again", "--tiling-from", str(tmp_path / "first" / "report.json"))
    assert again.returncode == 0, again.stderr
    for name in ("Network.c", "report.json"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name
    report = json.loads((tmp_path / "first" / "report.json").read_text())
    key, names = next(iter(report["tiling"]["solution"]["home_inputs"].items()))
    report["tiling"]["solution"]["home_inputs"] = {key: [*names, "frames"]}
    (tmp_path / "edited.json").write_text(json.dumps(report))
    refused = compile_to("edited", "--tiling-from", str(tmp_path / "edited.json"))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "reads 'frames' in place" in refused.stderr and "only a constant every tile reads whole" in refused.stderr


def test_an_l1_too_small_for_the_recurrence_says_why_it_is_not_cut(
        keyword_spotter: tuple[Path, dict[str, np.ndarray]], cluster_host: PluginHost) -> None:
    """Below what the one tile needs without its weights, the diagnosis names the recurrence as the reason."""
    from deeploy_core.api import compile_model
    from deeploy_core.tiling.errors import TilingInfeasibleError

    model, _ = keyword_spotter
    with pytest.raises(TilingInfeasibleError) as raised:
        compile_model(model, CompileOptions(platform="pulp-cluster", level_sizes={"L1": 32000}), cluster_host)
    message = str(raised.value)
    assert "for layer '/recurrent/LSTM' (LSTM) but has 32000" in message
    assert "stay whole: a recurrence: each step needs the whole hidden state of the step before" in message
    assert raised.value.needed_bytes is not None and 32000 < raised.value.needed_bytes < 64000
