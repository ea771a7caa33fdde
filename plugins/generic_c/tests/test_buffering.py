"""The tiler decides the buffering; ``--buffering`` only selects the tiler of that scheme.

Before this was settled, ``--buffering``'s default ("single") overrode the
tiler's own scheme: ``--tiler double-buffering`` compiled single-buffered and
``--tiler single-buffering --buffering double`` double-buffered, so every
"double buffering" conformance run tested single buffering.  These tests fail
on that code: they compare what the two schemes really generate.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.builtin.plugin import DOUBLE_BUFFERING, SINGLE_BUFFERING
from deeploy_core.errors import DeeployError
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

ROOT = peer_tests_root(Path(__file__).parent)
MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"
PEER = "Models/MLPerf/KeywordSpotting"
"""A CNN whose layers need several tiles at this L1."""
L1 = 16000


def _peer():  # type: ignore[no-untyped-def]
    assert ROOT is not None
    (peer,) = [test for test in find_peer_tests(ROOT, PEER) if test.name == PEER]
    return peer


def _compile(host: PluginHost, out: Path, **choice: Any) -> dict[str, str]:
    """Compile the peer tiled into L1 and return every written text file by name."""
    peer = _peer()
    options = CompileOptions(platform="generic-c", input_types=peer.input_types(), level_sizes={"L1": L1}, **choice)
    _, generated = compile_model(peer.model, options, host)
    generated.write(out)
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(out.iterdir()) if path.is_file()}


def _overlaps(blocks: dict[str, tuple[int, int]]) -> list[tuple[str, str]]:
    spans = sorted((offset, offset + size, name) for name, (offset, size) in blocks.items())
    return [(a[2], b[2]) for a, b in zip(spans, spans[1:]) if b[0] < a[1]]


@pytest.mark.skipif(ROOT is None, reason=MISSING)
def test_double_buffering_differs_from_single_and_keeps_two_buffers_per_streamed_tensor(
        generic_c_host: PluginHost, tmp_path: Path) -> None:
    single = _compile(generic_c_host, tmp_path / "single", buffering="single")
    double = _compile(generic_c_host, tmp_path / "double", buffering="double")
    assert single["Network.c"] != double["Network.c"]
    single_report, double_report = json.loads(single["report.json"]), json.loads(double["report.json"])
    assert single_report["memory_levels"]["L1"]["buffering"] == "single"
    assert double_report["memory_levels"]["L1"]["buffering"] == "double"
    assert double_report["memory_levels"]["L1"]["used"] != single_report["memory_levels"]["L1"]["used"]
    assert double_report["tiling"]["buffering"] == "double" and double_report["tiling"]["tiler"] == DOUBLE_BUFFERING

    streamed = 0
    for layer in double_report["tiling"]["layers"]:
        assert layer["buffering"] == "double"
        fused_intermediate = any(layer["key"] in pattern["keys"][:-1] for pattern in double_report["tiling"]["patterns"])
        assert layer["buffers"]["out0"]["slots"] == (1 if fused_intermediate else 2)  # intermediates: one tile
        offsets = double_report["tiling"]["memory_map"][layer["key"]]
        # Each tensor's slots lie side by side in its block: no other block starts inside them.
        blocks = {name: (offsets[name], buffer["slots"] * buffer["slot_bytes"]) for name, buffer in layer["buffers"].items()}
        assert not _overlaps(blocks), (layer["key"], _overlaps(blocks))
        if layer["tiles"] > 1:
            streamed += sum(1 for name, buffer in layer["buffers"].items() if name.startswith("in") and buffer["slots"] == 2)
    assert streamed > 0, "the peer must stream at least one input through two slots at this L1"
    for layer in single_report["tiling"]["layers"]:
        assert layer["buffering"] == "single"
        assert {buffer["slots"] for buffer in layer["buffers"].values()} == {1}

    # The code alternates the two slots (fetching tile t+1 while t computes) only when double buffering: one tile
    # loop per layer tiled alone or fused pattern, each of whose layers prefetches its own inputs.
    layers = len(double_report["tiling"]["layers"])
    loops = layers - sum(len(pattern["keys"]) - 1 for pattern in double_report["tiling"]["patterns"])
    code = {name: "".join(text for file, text in files.items() if file.endswith(".c"))
            for name, files in (("single", single), ("double", double))}
    assert code["double"].count("const int32_t slot = t & 1;") == loops
    assert len(re.findall(r"slot \^ 1, in_futures(_\d+)?\[slot \^ 1\]", code["double"])) == layers
    single_loops = len(single_report["tiling"]["layers"]) - sum(
        len(pattern["keys"]) - 1 for pattern in single_report["tiling"]["patterns"])
    assert "slot = t & 1" not in code["single"] and code["single"].count("const int32_t slot = 0;") == single_loops


@pytest.mark.skipif(ROOT is None, reason=MISSING)
def test_tiler_name_and_buffering_shorthand_give_identical_output(generic_c_host: PluginHost, tmp_path: Path) -> None:
    by_tiler = _compile(generic_c_host, tmp_path / "tiler", tiler=DOUBLE_BUFFERING)
    by_shorthand = _compile(generic_c_host, tmp_path / "shorthand", buffering="double")
    assert by_tiler == by_shorthand
    single_by_tiler = _compile(generic_c_host, tmp_path / "single-tiler", tiler=SINGLE_BUFFERING)
    assert single_by_tiler["Network.c"] != by_tiler["Network.c"]
    assert single_by_tiler == _compile(generic_c_host, tmp_path / "default")


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize(("tiler", "buffering"), [(SINGLE_BUFFERING, "double"), (DOUBLE_BUFFERING, "single")])
def test_contradictory_tiler_and_buffering_are_refused(generic_c_host: PluginHost, tiler: str, buffering: str) -> None:
    peer = _peer()
    options = CompileOptions(platform="generic-c", input_types=peer.input_types(), level_sizes={"L1": L1},
                             tiler=tiler, buffering=buffering)
    with pytest.raises(DeeployError, match=f"--buffering {buffering} contradicts --tiler {tiler}"):
        compile_model(peer.model, options, generic_c_host)


@pytest.mark.skipif(ROOT is None, reason=MISSING)
def test_reused_tiling_keeps_its_buffering(generic_c_host: PluginHost, tmp_path: Path) -> None:
    """``--tiling-from`` alone reuses the report's tiler; a contradicting scheme is refused in one line."""
    double = _compile(generic_c_host, tmp_path / "double", buffering="double")
    report = tmp_path / "double" / "report.json"
    assert _compile(generic_c_host, tmp_path / "again", tiling_from=report) == double
    with pytest.raises(DeeployError, match="made with double buffering"):
        _compile(generic_c_host, tmp_path / "single", tiling_from=report, buffering="single")


@pytest.mark.skipif(ROOT is None, reason=MISSING)
def test_command_line_buffering_flags(tmp_path: Path) -> None:
    """The CLI check the issue names: --tiler double-buffering == --buffering double != --buffering single."""
    peer = _peer()
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"}

    def compile_with(name: str, *flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(peer.model), "--input-types-from",
                               str(peer.inputs), "--l1", str(L1), "-o", str(tmp_path / name), *flags],
                              capture_output=True, text=True, env=env)

    for name, flags in (("tiler", ("--tiler", DOUBLE_BUFFERING)), ("double", ("--buffering", "double")),
                        ("single", ("--buffering", "single"))):
        result = compile_with(name, *flags)
        assert result.returncode == 0, result.stderr
    network = {name: (tmp_path / name / "Network.c").read_bytes() for name in ("tiler", "double", "single")}
    assert network["tiler"] == network["double"]
    assert network["double"] != network["single"]

    refused = compile_with("contradiction", "--tiler", SINGLE_BUFFERING, "--buffering", "double")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"error: --buffering double contradicts --tiler {SINGLE_BUFFERING} (single buffering); give one of them, "
        f"e.g. --tiler {DOUBLE_BUFFERING}"]
    assert not (tmp_path / "contradiction").exists()
