"""``deeploy-core sweep`` (issue 23 part 1) with real processes: a dask scheduler and two workers, one of them
killed mid-sweep; a LocalCluster sweep whose Pareto page is rendered in headless Chromium; resuming; a torn last
line; the one-line errors.  The networks are two small peer tests (read in place from ../shared)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner

from deeploy_core.cli import cli
from deeploy_core.errors import DeeployError
from deeploy_core.sweep.figures import report_figures, reproducible
from deeploy_core.sweep.pareto import FRONT_COLOUR, pareto_front, pareto_html
from deeploy_core.sweep.results import ResultsWriter, read_results
from deeploy_core.testing.models import conformance_model
from deeploy_core.testing.peer_tests import peer_tests_root
from tests.browser import screenshot

PLUGINS = "generic-c,pulp-cluster,minimalloc"
NETWORKS = ("Models/miniMobileNet", "Kernels/Integer/MatMul/Regular")
GRID = ("--grid", "buffering=single,double", "--grid", "allocator=first-fit,minimalloc")
SCRIPTS = Path(sys.executable).parent
SVG = "{http://www.w3.org/2000/svg}"


def _environment() -> dict[str, str]:
    return {**os.environ, "DEEPLOY_CORE_PLUGINS": PLUGINS}


@pytest.fixture(scope="module")
def networks() -> list[Path]:
    pytest.importorskip("distributed", reason="the sweep extra is not installed: pip install -e '.[sweep]'")
    pytest.importorskip("deeploy_pulp_cluster", reason="the pulp-cluster plugin (plugins/pulp_cluster) is not installed")
    pytest.importorskip("deeploy_minimalloc", reason="the minimalloc plugin (plugins/minimalloc) is not installed")
    root = peer_tests_root(Path(__file__).resolve().parent)
    if root is None:
        pytest.skip("Deeploy's peer tests (../shared/peer-tests/deeploy) are not available")
    folders = [root / name for name in NETWORKS]
    missing = [str(folder) for folder in folders if not (folder / "network.onnx").is_file()]
    if missing:
        pytest.skip(f"peer tests missing: {', '.join(missing)}")
    return folders


def sweep_argv(folders: list[Path], output: Path, *extra: str) -> list[str]:
    return [str(SCRIPTS / "deeploy-core"), "sweep", *map(str, folders), "--platform", "pulp-cluster", *GRID, *extra,
            "-o", str(output)]


def run_sweep(argv: list[str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, env=_environment(), timeout=300)
    print(result.stdout, result.stderr, sep="\n")
    return result


def records_of(output: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (output / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def point_names(records: list[dict[str, object]]) -> list[str]:
    return sorted(f"{record['network']} {json.dumps(record['options'], sort_keys=True)}" for record in records)


def expected_names(l1_sizes: tuple[int, ...]) -> list[str]:
    return sorted(f"{network} {json.dumps({'allocator': allocator, 'buffering': buffering, 'l1': l1}, sort_keys=True)}"
                  for network in ("miniMobileNet", "Regular") for l1 in l1_sizes
                  for buffering in ("single", "double") for allocator in ("first-fit", "minimalloc"))


def local_figures(record: dict[str, object], tmp_path: Path) -> dict[str, object]:
    """The point compiled again by ``deeploy-core compile`` in this process, from the record's command."""
    argv = shlex.split(str(record["command"]))[2:]
    out = tmp_path / f"local-{record['key']}"
    argv[argv.index("OUT")] = str(out)
    result = CliRunner().invoke(cli, ["compile", *argv, "--quiet"], env={"DEEPLOY_CORE_PLUGINS": PLUGINS})
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    timings = json.loads((out / "timings.json").read_text())
    return reproducible(report_figures(report, timings))


# -- a scheduler and two workers, one killed mid-sweep --------------------------------------------------------------


@dataclass
class DaskProcesses:
    address: str
    processes: dict[str, subprocess.Popen[bytes]]


@pytest.fixture
def dask_processes(tmp_path: Path, networks: list[Path]) -> Iterator[DaskProcesses]:
    scheduler_file = tmp_path / "scheduler.json"
    processes: dict[str, subprocess.Popen[bytes]] = {}
    logs = tmp_path / "logs"
    logs.mkdir()

    def start(name: str, argv: list[str]) -> None:
        with (logs / f"{name}.log").open("wb") as log:
            processes[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=_environment(),
                                               cwd=tmp_path)

    dask = str(SCRIPTS / "dask")
    try:
        start("scheduler", [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                            "--scheduler-file", str(scheduler_file)])
        deadline = time.monotonic() + 90
        while not scheduler_file.is_file() or not scheduler_file.read_text().strip():
            assert processes["scheduler"].poll() is None, (logs / "scheduler.log").read_text()
            assert time.monotonic() < deadline, "the dask scheduler did not start"
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written whole, but give the writer a moment to close it
        address = json.loads(scheduler_file.read_text())["address"]
        for name in ("a", "b"):
            start(name, [dask, "worker", address, "--name", name, "--nworkers", "1", "--nthreads", "1",
                         "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                         "--local-directory", str(tmp_path / f"worker-{name}")])
        yield DaskProcesses(address, processes)
    finally:  # workers first: a worker whose scheduler is gone waits for it before it ends
        for name in reversed(list(processes)):
            process = processes[name]
            if process.poll() is None:
                process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def complete_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_a_worker_killed_mid_sweep_loses_no_point(dask_processes: DaskProcesses, networks: list[Path],
                                                  tmp_path: Path) -> None:
    import distributed

    output = tmp_path / "sweep"
    with distributed.Client(dask_processes.address, timeout="60s") as client:
        client.wait_for_workers(2, timeout=120)
        worker_a = next(address for address, info in client.scheduler_info()["workers"].items()
                        if info.get("name") == "a")
        sweep = subprocess.Popen(
            sweep_argv(networks, output, "--grid", "l1=8192,16384", "--scheduler", dask_processes.address),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_environment())
        killed_after: int | None = None
        busy: list[object] = []
        deadline = time.monotonic() + 240
        try:
            while sweep.poll() is None and time.monotonic() < deadline:
                done = complete_lines(output / "results.jsonl")
                if killed_after is None and done >= 1:
                    busy = list(client.processing(workers=[worker_a]).get(worker_a, ()))
                    if busy or done >= 12:  # a task in flight on worker a, or (rarely) none left to catch it with
                        dask_processes.processes["a"].kill()
                        killed_after = done
                time.sleep(0.02)
            stdout, stderr = sweep.communicate(timeout=240)
        finally:
            if sweep.poll() is None:
                sweep.kill()
                sweep.wait()
    print(stdout, stderr, sep="\n")
    print(f"worker a killed after {killed_after} of 16 points, with {len(busy)} task(s) in flight on it")
    assert sweep.returncode == 0, stderr
    assert killed_after is not None and killed_after < 16, "the sweep ended before a worker could be killed"
    assert dask_processes.processes["a"].poll() is not None
    records = records_of(output)
    assert point_names(records) == expected_names((8192, 16384))  # every point, exactly once
    assert len({record["key"] for record in records}) == 16
    assert "16 computed" in stdout and "16 ok" in stdout
    for record in records:
        assert record["status"] == "ok", record
        assert reproducible(record["figures"]) == local_figures(record, tmp_path), record["command"]  # type: ignore[arg-type]


# -- a LocalCluster sweep, its page in a browser, resuming, a torn line ------------------------------------------


@pytest.fixture(scope="module")
def local_sweep(networks: list[Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The sweep's folder and its command without ``-o``."""
    output = tmp_path_factory.mktemp("local-sweep") / "sweep"
    argv = sweep_argv(networks, output, "--grid", "l1=8192,16384,32768")[:-2]
    result = run_sweep([*argv, "--workers", "2", "-o", str(output)])
    assert result.returncode == 0, result.stderr
    assert "24 points (2 models x 12): 24 computed on a local cluster of 2 workers" in result.stdout
    return output, argv


def test_a_local_cluster_sweep_records_every_point_once(local_sweep: tuple[Path, list[str]]) -> None:
    output, _ = local_sweep
    records = records_of(output)
    assert point_names(records) == expected_names((8192, 16384, 32768))
    for record in records:
        assert record["status"] in ("ok", "infeasible", "error")
        if record["status"] == "ok":
            figures = record["figures"]
            assert isinstance(figures, dict)
            assert figures["memory_bytes"] == sum(figures["level_peaks"].values()) > 0
            assert figures["estimated_cycles"] > 0 and set(figures["traffic"]) >= {"L2->L1", "L1->L2"}
            assert figures["compile_seconds"] > 0
        else:
            assert record["message"] and "\n" not in str(record["message"])


def test_the_pareto_page_shows_each_front_in_chromium(local_sweep: tuple[Path, list[str]], tmp_path: Path) -> None:
    output, _ = local_sweep
    page = output / "pareto.html"
    text = page.read_text(encoding="utf-8")
    assert "https://" not in text and text.count("http://") == text.count('xmlns="http://www.w3.org/2000/svg"') == 2
    assert "<link" not in text and " src=" not in text
    records = records_of(output)
    for network in ("miniMobileNet", "Regular"):
        start = text.index(f'<section class="network" data-network="{network}">')
        svg = text[text.index("<svg", start):text.index("</svg>", start) + len("</svg>")]
        root = ET.fromstring(svg)
        lines = [line for line in root.iter(f"{SVG}polyline") if line.get("class") == "front-line"]
        assert len(lines) == 1 and lines[0].get("points")
        groups = [group for group in root.iter(f"{SVG}g") if "point" in (group.get("class") or "").split()]
        front = [group for group in groups if "front" in (group.get("class") or "").split()]
        ok = [record for record in records if record["network"] == network and record["status"] == "ok"]
        coordinates = [(record["figures"]["memory_bytes"], record["figures"]["estimated_cycles"])  # type: ignore[index]
                       for record in ok]
        assert front and len(front) == len({xy for xy, on in zip(coordinates, pareto_front(coordinates)) if on})
        assert len(groups) == len(set(coordinates))  # one marker per distinct (memory, cycles)
        labels = sum(len(list(group.iter(f"{SVG}text"))) for group in groups)
        assert labels == len(ok)  # every point labelled with its options
    png = tmp_path / "pareto.png"
    pixels = screenshot(page, png, 1100, 2600)
    print(f"screenshot of the Pareto page: {png}")
    not_white = np.any(pixels < 245, axis=-1)
    assert not_white.mean() > 0.03, "the screenshot is (nearly) all white"
    red = np.array([int(FRONT_COLOUR[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.int16)
    front_pixels = np.all(np.abs(pixels - red) <= 8, axis=-1)
    assert front_pixels.sum() > 400, "the Pareto front's red markers and line are not on screen"
    rows = np.nonzero(front_pixels.any(axis=1))[0]
    assert rows.max() - rows.min() > 600, "only one network's front is on screen"


def test_a_rerun_adds_nothing_and_computes_nothing(local_sweep: tuple[Path, list[str]],
                                                   tmp_path: Path) -> None:
    output, argv = local_sweep
    copy = tmp_path / "again"
    shutil.copytree(output, copy)
    before = (copy / "results.jsonl").read_bytes()
    result = run_sweep([*argv, "-o", str(copy)])
    assert result.returncode == 0, result.stderr
    assert "24 points (2 models x 12): 0 computed, 24 already in results.jsonl" in result.stdout
    assert (copy / "results.jsonl").read_bytes() == before
    assert result.stderr == ""  # no cluster was started, no point shown


def test_a_torn_last_line_is_ignored_and_its_point_recomputed(local_sweep: tuple[Path, list[str]],
                                                              tmp_path: Path) -> None:
    output, argv = local_sweep
    copy = tmp_path / "torn"
    shutil.copytree(output, copy)
    lines = (copy / "results.jsonl").read_bytes().splitlines(keepends=True)
    torn = lines[-1][: len(lines[-1]) // 2]
    (copy / "results.jsonl").write_bytes(b"".join(lines[:-2]) + torn)
    result = run_sweep([*argv, "--workers", "1", "-o", str(copy)])
    assert result.returncode == 0, result.stderr
    assert "2 computed on a local cluster of 1 worker" in result.stdout and "22 already" in result.stdout
    data = (copy / "results.jsonl").read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 24  # the torn part was cut, not left before a new line
    records = records_of(copy)
    assert point_names(records) == expected_names((8192, 16384, 32768))
    again = {record["key"]: reproducible(record["figures"]) for record in records}  # type: ignore[arg-type]
    assert again == {record["key"]: reproducible(record["figures"])  # type: ignore[arg-type]
                     for record in records_of(output)}


# -- without processes: results file, Pareto front, one-line errors, imports -----------------------------------


def test_reading_results_ignores_a_torn_line_and_refuses_a_corrupt_one(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"key": "a", "status": "ok"}\n{"key": "b", "sta')
    stored = read_results(path)
    assert list(stored.records) == ["a"] and stored.torn_bytes == len(b'{"key": "b", "sta')
    with ResultsWriter(path) as writer:
        writer.append({"key": "c", "status": "ok"})
    assert path.read_bytes() == b'{"key": "a", "status": "ok"}\n{"key": "c", "status": "ok"}\n'
    path.write_bytes(b'{"key": "a"}\nnot json\n{"key": "c"}\n')
    with pytest.raises(DeeployError, match="line 2 is not a sweep record"):
        read_results(path)


def test_a_second_writer_is_refused_while_the_first_writes(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    with ResultsWriter(path):
        with pytest.raises(DeeployError, match="another sweep is writing"):
            with ResultsWriter(path):
                pass


def test_pareto_front_and_a_self_contained_escaped_page() -> None:
    assert pareto_front([(1, 5), (2, 2), (3, 3), (2, 2), (5, 1), (6, 1)]) == [True, True, False, True, True, False]
    nasty = 'a<b>&"c'
    records = [{"key": str(i), "network": nasty, "options": {"l1": l1}, "status": "ok", "message": "",
                "figures": {"memory_bytes": l1 * 2, "compile_seconds": 1.0 / l1}} for i, l1 in enumerate((10, 20))]
    records.append({"key": "x", "network": nasty, "options": {"l1": 1}, "status": "infeasible",
                    "message": "L1 needs <more>", "figures": {}})
    page, fronts = pareto_html("t", {nasty: records})
    assert fronts == {nasty: 2} and "<b>" not in page and "&lt;more&gt;" in page
    assert "compile time in s" in page  # no cycles: the y axis says what it shows
    assert page.count("<script>") == 1 and "https://" not in page


def _tiny_model(tmp_path: Path) -> Path:
    model = tmp_path / "cnn.onnx"
    onnx.save(conformance_model("cnn"), model)
    return model


def test_an_unknown_grid_key_is_one_line_naming_the_valid_keys(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the sweep extra is not installed")
    result = CliRunner().invoke(cli, ["sweep", str(_tiny_model(tmp_path)), "--grid", "bogus=1,2", "-o",
                                      str(tmp_path / "out")], env={"DEEPLOY_CORE_PLUGINS": "generic-c"})
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --grid bogus: unknown key 'bogus'; valid keys: allocator, ")
    keys = lines[0].split("valid keys: ")[1].split(" (")[0].split(", ")
    assert {"buffering", "l1", "l2", "fusion", "tiling-strategy", "cores", "memory-hierarchy", "tiler",
            "strategy"} <= set(keys)  # compile's options and the built-in tilers' extension option
    assert not {"input-shape", "option", "grid", "output"} & set(keys)  # repeatable ones and sweep's own are not keys
    assert not (tmp_path / "out").exists()


def test_without_dask_sweep_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("dask", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # `import distributed` now fails as if not installed
    result = CliRunner().invoke(cli, ["sweep", str(_tiny_model(tmp_path)), "--grid", "l1=8000", "-o",
                                      str(tmp_path / "out")], env={"DEEPLOY_CORE_PLUGINS": "generic-c"})
    assert result.exit_code == 2
    assert result.stderr == ("error: sweep needs dask.distributed, which is not installed: "
                             "pip install 'deeploy-core[sweep]'\n")


@pytest.mark.parametrize("arguments", [["--help"], ["sweep", "--help"]], ids=["group help", "sweep help"])
def test_help_imports_no_dask(arguments: list[str]) -> None:
    probe = ("import json, sys\nfrom deeploy_core.cli import main\nsys.argv = ['deeploy-core', *json.loads(sys.argv[1])]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(json.dumps(sorted(m for m in ('dask', 'distributed') if m in sys.modules)))\n")
    ran = subprocess.run([sys.executable, "-c", probe, json.dumps(arguments)], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "DEEPLOY_CORE_PLUGINS": "generic-c"}, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout.splitlines()[-1]) == []
