"""The listing commands stay readable at 80 columns and in a pipe: no op name or number is ever wrapped.

Each command runs for real, piped with ``COLUMNS=80`` and on a pseudo-terminal
80 columns wide; its text output is parsed back and compared with what the
same command prints with ``--json``.  A plain table is parsed by the column
positions of its rule line, so a cell that spilled into the next line or the
next column fails the comparison.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from deeploy_core.cli.analyze_command import LAYER_COLUMNS, requantisation_text
from deeploy_core.cli.level_traffic_text import LEVEL_COLUMNS, capacity_text
from deeploy_core.errors import printable_line
from deeploy_core.testing.peer_tests import peer_tests_root
from deeploy_core.testing.terminal import Finished, run_on_terminal, run_piped

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
pytest.importorskip("deeploy_pulp_cluster", reason="the cluster platform (plugins/pulp_cluster) is not installed")

PLUGINS = "generic-c,pulp-cluster"
PEERS = peer_tests_root()
MINI_MOBILENET = None if PEERS is None else PEERS / "Models" / "miniMobileNet"
BOX_DRAWING = re.compile("[\u2500-\u257f]")
WAYS = ["pipe", "terminal"]


def run_text(way: str, *args: str, columns: int = 80) -> Finished:
    """The command's text output, piped with ``COLUMNS`` or on a terminal that wide (stderr apart)."""
    runner = run_piped if way == "pipe" else run_on_terminal
    finished = runner(*args, "--quiet", plugins=PLUGINS, columns=columns) if args[0] == "analyze" \
        else runner(*args, plugins=PLUGINS, columns=columns)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    return finished


def run_json(*args: str) -> object:
    finished = run_piped(*args, "--json", plugins=PLUGINS)
    assert finished.returncode == 0, finished.stderr
    return json.loads(finished.stdout)


def plain_table(lines: list[str], header: int, rows: int) -> list[list[str]]:
    """The header and ``rows`` rows of the plain table whose header is ``lines[header]``, cut at the columns of
    its rule line; fails if any cell runs into the gap between two columns."""
    rule = lines[header + 1]
    assert set(rule) <= {"-", " "}, f"no rule line under the header: {rule!r}"
    spans = [match.span() for match in re.finditer(r"-+", rule)]
    table = []
    for line in lines[header:header + 2 + rows]:
        if line is rule:
            continue
        cells = []
        for index, (start, end) in enumerate(spans):
            last = index == len(spans) - 1
            cells.append(line[start:].strip() if last else line[start:end].strip())
            if not last:
                assert line[end:spans[index + 1][0]].strip() == "", f"a cell overflows its column: {line!r}"
        table.append(cells)
    return table


def find_line(lines: list[str], text: str) -> int:
    matches = [number for number, line in enumerate(lines) if line == text]
    assert len(matches) == 1, f"{text!r} is not a line of:\n" + "\n".join(lines)
    return matches[0]


def no_box_drawing(output: str) -> None:
    assert not BOX_DRAWING.search(output), "at 80 columns the tables are plain text:\n" + output


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("platform", ["generic-c", "pulp-cluster"])
def test_supported_ops_rows_are_whole(way: str, platform: str) -> None:
    rows = run_json("supported-ops", "--platform", platform)
    output = run_text(way, "supported-ops", "--platform", platform).stdout
    no_box_drawing(output)
    lines = output.splitlines()
    title = find_line(lines, f"operators on {platform}")
    by_op: dict[str, list[dict]] = {}
    for row in rows:
        by_op.setdefault(row["op"], []).append(row)
    table = plain_table(lines, title + 1, len(by_op))
    assert table[0] == ["op", "tiling", "verified", "kernels"]
    assert [cells[0] for cells in table[1:]] == list(by_op), "one line per op, each op once"
    for cells in table[1:]:
        first = by_op[cells[0]][0]
        assert cells[1] == first["tiling"]["constraint"]
        assert cells[2] == (", ".join(dict.fromkeys(check["status"] for check in first["verification"]))
                            or "unstated")
        short = cells[0].rsplit(".", 1)[-1]
        assert cells[3].split("; ") == list(dict.fromkeys(
            row["kernel"].removeprefix(short).strip() or row["kernel"] for row in by_op[cells[0]]))
    assert len(lines) == title + 3 + len(by_op), "nothing but the table on stdout"
    assert max(len(line) for line in lines) < 200, "no 780-character lines"


@pytest.mark.parametrize("way", WAYS)
def test_plugin_records_are_whole(way: str) -> None:
    listed = run_json("plugins", "--all")
    output = run_text(way, "plugins", "--all").stdout
    no_box_drawing(output)
    blocks = [block.splitlines() for block in output.strip("\n").split("\n\n")]
    assert len(blocks) == len(listed)
    for block, record in zip(blocks, listed):
        fields = dict(line.split(":", 1) for line in block)
        fields = {key: value.strip() for key, value in fields.items()}
        assert list(fields) == ["plugin", "distribution", "version", "provides", "status"]
        assert (fields["plugin"], fields["distribution"], fields["version"]) == \
            (record["name"], record["distribution"], record["version"])
        error = f": {printable_line(record['error'])}" if record["error"] else ""
        assert fields["status"] == record["status"] + error
        for kind, names in record["extensions"].items():
            for name in names:
                assert re.search(rf"\b{re.escape(kind)}: [^;]*\b{re.escape(name)}\b", fields["provides"]), fields


def check_analyze(way: str, model: Path, *options: str) -> None:
    """Every layer of the report is one whole row; the totals and the estimate's figures are intact."""
    report = run_json("analyze", str(model), *options)
    output = run_text(way, "analyze", str(model), *options).stdout
    no_box_drawing(output)
    lines = output.splitlines()
    title = find_line(lines, f"{model.name} on {report['platform']}")
    layers = report["layers"]
    table = plain_table(lines, title + 1, len(layers))
    assert table[0] == list(LAYER_COLUMNS)
    for cells, layer in zip(table[1:], layers):
        first = layer["outputs"][0]
        offsets = ", ".join(str(offset) for offset in layer["arena_offsets"].values()) or "-"
        assert cells == [str(layer["index"]), layer["op"], printable_line(layer["node"]),
                         "x".join(map(str, first["shape"])), first["dtype"], str(layer["macs"]),
                         str(layer["weight_bytes"]), str(layer["activation_bytes"]), offsets,
                         requantisation_text(layer.get("requantization"))]
    memory = report["memory"]
    assert lines[title + 3 + len(layers)] == (
        f"ops {report['number_of_ops']}, MACs {report['macs']}, weights {report['weight_bytes']} B, "
        f"arena {memory['arena_bytes']} B (lower bound {memory['lower_bound_bytes']} B, "
        f"allocator {memory['allocator']})")
    if "traffic" in report:
        header = find_line(lines, "memory levels") + 1
        peaks = report["level_peaks"]
        table = plain_table(lines, header, len(peaks))
        assert table[0] == list(LEVEL_COLUMNS)
        assert table[1:] == [[level, capacity_text(report, level), str(peak)] for level, peak in sorted(peaks.items())]
        assert lines[header + 2 + len(peaks)] == "traffic per inference: " + ", ".join(
            f"{link} {count} B" for link, count in sorted(report["traffic"].items()))
    if "estimate" in report:
        estimate = report["estimate"]
        header = find_line(lines, f"estimated cycles: {estimate['cycles']} in total") + 1
        table = plain_table(lines, header, len(estimate["layers"]))
        keys = ("layer", "tiles", "cycles", "compute_cycles", "dma_cycles", "bytes_in", "bytes_out")
        assert table[1:] == [[str(entry.get(key, "-")) for key in keys] for entry in estimate["layers"]]


@pytest.mark.parametrize("way", WAYS)
def test_analyze_rows_are_whole_on_the_example(way: str, tiny_cnn: Path) -> None:
    check_analyze(way, tiny_cnn)


@pytest.mark.skipif(MINI_MOBILENET is None, reason="Deeploy's peer tests (../shared/peer-tests/deeploy) are absent")
@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("platform", ["generic-c", "generic-c --l1 16000", "pulp-cluster"])
def test_analyze_rows_are_whole_on_a_peer_network(way: str, platform: str) -> None:
    """Untiled, tiled on generic-c (two levels, L2 unbounded) and on the cluster (three levels, an estimate)."""
    assert MINI_MOBILENET is not None
    check_analyze(way, MINI_MOBILENET / "network.onnx", "--platform", *platform.split(),
                  "--input-types-from", str(MINI_MOBILENET / "inputs.npz"))


def test_a_wide_terminal_keeps_the_drawn_table() -> None:
    listed = run_json("plugins", "--all")
    output = run_text("terminal", "plugins", "--all", columns=250).stdout
    assert BOX_DRAWING.search(output), "a terminal wide enough for the table gets it drawn:\n" + output
    rows = [line for line in output.splitlines() if line.startswith("\u2502")]
    assert len(rows) == len(listed), "one line per plugin: nothing wrapped"
    for row, record in zip(rows, listed):
        cells = [cell.strip() for cell in row.strip("\u2502").split("\u2502")]
        assert cells[:3] == [record["name"], record["distribution"], record["version"]]


def test_a_narrow_terminal_falls_back_even_for_a_short_table() -> None:
    """At 40 columns even the plugin listing cannot be drawn whole: records, each value on its line."""
    output = run_text("terminal", "plugins", columns=40).stdout
    no_box_drawing(output)
    assert "plugin:       generic-c" in output.splitlines()


def test_requantisation_text_summarises_requantized_add_by_its_output_group() -> None:
    """RequantizedAdd reports three groups (``rqs1``, ``rqs2``, ``rqs_out``); the column shows the output's."""
    group = {"shift": 4, "range": [-128, 127], "mul": 3, "add": 1}
    requant = {"rqs1": {**group, "shift": 2}, "rqs2": {**group, "shift": 3}, "rqs_out": group}
    assert requantisation_text(requant) == ">>4 [-128, 127]"


def test_requantisation_text_reads_every_arithmetic_of_the_fused_quantised_kernels() -> None:
    """TFLite's signed exponent reads as a shift direction; exact mode's float32 kernels show their output scale."""
    tflite_conv = {"arithmetic": "tflite", "multiplier": [1, 2], "shift": [-10, -9], "zero_point": -128,
                   "range": [-128, 127]}
    assert requantisation_text(tflite_conv) == "tflite >>10..>>9 z=-128 [-128, 127]"
    assert requantisation_text({"arithmetic": "tflite", "shift": 1, "range": [0, 255]}) == "tflite <<1 [0, 255]"
    assert requantisation_text({"arithmetic": "tflite", "average": "rounded", "range": [-128, 127]}) \
        == "tflite [-128, 127]"
    exact_add = {"arithmetic": "float32", "input_scales": [0.05, 0.03], "output_scale": 0.07, "zero_point": 1,
                 "range": [-128, 127]}
    assert requantisation_text(exact_add) == "float32 s=0.07 z=1 [-128, 127]"
    float_bias_conv = {"arithmetic": "float32", "bias": "float32", "accumulator_scale": [1e-4, 2e-4],
                       "output_scale": 0.02, "zero_point": -3, "range": [-3, 127]}
    assert requantisation_text(float_bias_conv) == "float32 float-bias s=0.02 z=-3 [-3, 127]"


@pytest.mark.parametrize("way", WAYS)
def test_validate_prints_every_number_whole(way: str, tiny_cnn: Path) -> None:
    """Issue 33 point 1: at 80 columns rich cut the comparison's cells (``5.96e-…``, ``probab…``); now plain."""
    finished = run_text(way, "validate", str(tiny_cnn), "--quiet")
    output = finished.stdout
    no_box_drawing(output)
    assert "\u2026" not in output, output
    lines = output.splitlines()
    header = next(number for number, line in enumerate(lines) if line.startswith("output  "))
    table = plain_table(lines, header, 1)
    assert table[0] == ["output", "max |ref|", "max abs error", "max rel error", "max LSB", "cosine", "mismatches",
                        "rule", "status"]
    row = dict(zip(table[0], table[1]))
    for column in ("max |ref|", "max abs error", "cosine"):
        float(row[column])  # a whole number: a cut one does not parse
    assert re.fullmatch(r"\d+/\d+", row["mismatches"]) and row["status"] == "ok"
    assert row["rule"].startswith("rel <= ") and row["rule"].endswith("cosine >= 0.9999"), row["rule"]
