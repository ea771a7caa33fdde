"""Progress while compiling, the timing line after it, timings.json beside report.json, and --quiet.

The progress interface is checked directly with a receiver that records
every call during a real tiled compile of the example network; the command
line is run as a user runs it, piped and on a pseudo-terminal.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.cli.progress import StatusLineProgress
from deeploy_core.deployer import STAGES
from deeploy_core.progress import Progress
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.folders import folder_files
from deeploy_core.testing.terminal import Finished, run_on_terminal, run_piped
from deeploy_core.tiling.errors import TilingInfeasibleError

L1 = 64000
"""Roomy enough for the example's tiling to solve in a fraction of a second."""
TIMING = re.compile(r"([a-z][a-z ]*?) (\d+\.\d\d) s")


class Recorder:
    """A :class:`Progress` that keeps every call with the stage it arrived in."""

    def __init__(self) -> None:
        self.stages: list[str] = []
        self.tasks: list[tuple[str, str]] = []
        self.steps: list[tuple[str, int, int, str]] = []

    def stage(self, name: str) -> None:
        self.stages.append(name)

    def task(self, text: str) -> None:
        self.tasks.append((self.stages[-1], text))

    def step(self, done: int, total: int, what: str) -> None:
        self.steps.append((self.stages[-1], done, total, what))

    def counted(self, prefix: str) -> list[tuple[int, int, str]]:
        """(done, total, item) of the steps whose text starts with ``prefix``."""
        return [(done, total, what[len(prefix):]) for _, done, total, what in self.steps if what.startswith(prefix)]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
    try:
        from make_tiny_cnn import tiny_cnn
    finally:
        sys.path.pop(0)
    path = tmp_path_factory.mktemp("model") / "tiny.onnx"
    onnx.save(tiny_cnn(), path)
    return path


def test_tiled_compile_reports_each_tiled_layer_as_k_of_n(generic_c_host: PluginHost, example: Path) -> None:
    recorder = Recorder()
    assert isinstance(recorder, Progress)
    _, generated = compile_model(example, CompileOptions("generic-c", level_sizes={"L1": L1}), generic_c_host,
                                 recorder)
    assert recorder.stages == list(STAGES)
    tiled = [layer["layer"] for layer in generated.report["tiling"]["layers"]]
    count = len(tiled)
    assert count == len([layer for layer in generated.report["layers"] if layer["op"] != "Flatten"]) > 5
    expected = [(number, count, name) for number, name in enumerate(tiled, 1)]
    for prefix in ("tiling model: ", "tiling: building tiles of "):
        assert recorder.counted(prefix) == expected, prefix
    # Placing goes by unit: a fused pattern (named by its last layer) is placed as one.
    inner = {name for pattern in generated.report["tiling"]["patterns"] for name in pattern["layers"][:-1]}
    units = [name for name in tiled if name not in inner]
    assert inner and recorder.counted("tiling: placing ") == [(n, len(units), name) for n, name in enumerate(units, 1)]
    assert ("bind", f"tiling: solving {count} layers") in recorder.tasks
    assert ("bind", "allocating the arena with first-fit") in recorder.tasks
    assert {stage for stage, *_ in recorder.steps} == {"bind"}, "the tiler runs in bind"
    stages = generated.timings["stages"]
    assert list(stages) == list(STAGES) and all(seconds >= 0 for seconds in stages.values())
    assert set(generated.timings["tiling"]) == {"model_build", "solve", "allocation"}
    assert generated.timings["tiling"]["solve"] <= stages["bind"]


def test_an_infeasible_tiling_reports_its_diagnosis_per_layer(generic_c_host: PluginHost, example: Path) -> None:
    recorder = Recorder()
    with pytest.raises(TilingInfeasibleError):
        compile_model(example, CompileOptions("generic-c", level_sizes={"L1": 1000}), generic_c_host, recorder)
    models = recorder.counted("tiling model: ")
    diagnosed = recorder.counted("diagnosing: ")
    assert len(diagnosed) == len(models) > 5
    assert [(done, total) for done, total, _ in diagnosed] == [(done, total) for done, total, _ in models]


def test_a_stage_callback_still_hears_every_stage(generic_c_host: PluginHost, example: Path) -> None:
    heard: list[str] = []
    compile_model(example, CompileOptions("generic-c"), generic_c_host, heard.append)
    assert heard == list(STAGES)


def compile_cli(example: Path, out: Path, *extra: str) -> Finished:
    finished = run_piped("compile", str(example), "-o", str(out), *extra, plugins="generic-c")
    assert finished.returncode == 0, finished.stderr
    return finished


def summary_seconds(line: str) -> dict[str, float]:
    """Stage → seconds of a ``timings: …; total …`` line (parts in parentheses left out)."""
    assert line.startswith("timings: "), line
    without_parts = re.sub(r" \([^)]*\)", "", line[len("timings: "):])
    return {name: float(seconds) for name, seconds in TIMING.findall(without_parts)}


def test_quiet_compile_prints_the_result_lines_only(example: Path, tmp_path: Path) -> None:
    finished = compile_cli(example, tmp_path / "out", "--quiet")
    assert finished.stderr == ""
    lines = finished.stdout.splitlines()
    assert lines[0].startswith("tiny.onnx: 11 layers, ")
    assert sorted(Path(line.split()[0]).name for line in lines[1:]) == sorted(
        path.name for path in (tmp_path / "out").iterdir())


def test_compile_ends_with_one_timing_line_and_writes_timings_json(example: Path, tmp_path: Path) -> None:
    finished = compile_cli(example, tmp_path / "out", "--l1", str(L1))
    [line] = finished.stderr.splitlines()
    seconds = summary_seconds(line)
    assert list(seconds) == [*STAGES, "write", "total"]
    assert seconds["total"] == pytest.approx(sum(value for name, value in seconds.items() if name != "total"),
                                             abs=0.01 * len(seconds))
    assert re.search(r"bind \d+\.\d\d s \(tiling: model build \d+\.\d\d s, solve \d+\.\d\d s, allocation", line)
    assert "timings:" not in finished.stdout
    timings = json.loads((tmp_path / "out" / "timings.json").read_text())
    assert list(timings["stages"]) == [*STAGES, "write"]
    assert set(timings["tiling"]) == {"model_build", "solve", "allocation"}
    assert all(isinstance(value, float) and value >= 0 for part in timings.values() for value in part.values())
    assert "timings" not in (tmp_path / "out" / "report.json").read_text()


def test_report_json_is_byte_identical_while_timings_json_changes(example: Path, tmp_path: Path) -> None:
    folders = [tmp_path / "first", tmp_path / "second"]
    for folder in folders:
        compile_cli(example, folder, "--l1", str(L1), "--quiet")
    first, second = (folder_files(folder) for folder in folders)
    assert first.keys() == second.keys() and "timings.json" in first
    assert {name: data for name, data in first.items() if name != "timings.json"} == \
        {name: data for name, data in second.items() if name != "timings.json"}


def test_validate_and_analyze_are_quiet_on_request(example: Path) -> None:
    quiet = run_piped("validate", str(example), "--quiet", plugins="generic-c")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert "best RunNetwork time" in quiet.stdout
    told = run_piped("validate", str(example), plugins="generic-c")
    assert told.returncode == 0, told.stderr
    assert list(summary_seconds(told.stderr.splitlines()[-1])) == [*STAGES, "write", "build and run", "total"]
    analyzed = run_piped("analyze", str(example), "--quiet", plugins="generic-c")
    assert analyzed.returncode == 0 and analyzed.stderr == ""


def test_a_terminal_shows_a_status_line_and_the_timing_line_last(example: Path, tmp_path: Path) -> None:
    finished = run_on_terminal("compile", str(example), "-o", str(tmp_path / "out"), "--l1", str(L1),
                               plugins="generic-c", columns=200, stderr_on_terminal=True)
    assert finished.returncode == 0, finished.stdout
    screen = finished.stdout
    # The spinner redraws a dozen times a second: which stages it caught depends on the machine's speed.
    assert "compiling tiny.onnx" in screen
    assert screen.rstrip().splitlines()[-1].startswith("timings: frontend ")


class StatusRecorder:
    """Stands in for rich's status line: keeps every text it is given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def update(self, text: object) -> None:
        self.texts.append(str(text))


def test_the_status_line_names_stage_work_and_count() -> None:
    status = StatusRecorder()
    progress = StatusLineProgress("compiling net.onnx", status)  # type: ignore[arg-type]
    progress.stage("bind")
    progress.task("tiling: solving 3 layers")
    progress.step(2, 3, "tiling: placing conv\n2")
    assert status.texts == ["compiling net.onnx: bind", "compiling net.onnx: bind — tiling: solving 3 layers",
                            "compiling net.onnx: bind — tiling: placing conv\\n2 (2/3)"]
    assert progress.seconds_since("bind") >= 0 and progress.seconds_since("never") == 0
