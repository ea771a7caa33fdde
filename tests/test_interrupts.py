"""Ctrl-C and SIGTERM stop a compile at once, leave the user's folder as it was and nothing hidden beside it.

The signals go to a real ``deeploy-core`` process compiling a long chain of
convolutions tiled for the PULP cluster at an L1 that is too small, so it
spends its time in CP-SAT (the tiling solve, then one diagnosis solve per
layer) — where an interrupt used to hang the process for good.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.cli.output_folder import remove_stale_staging, replace_folder
from deeploy_core.errors import DeeployError
from deeploy_core.tiling import cp_model
from deeploy_core.tiling import solving as tiling_solving
from deeploy_core.tiling.cp_model import minimum_memory
from deeploy_core.tiling.errors import TilingInfeasibleError, TilingSolveStoppedError
from tests.support.conv_layer_model import conv_like

ENV = {**os.environ, "DEEPLOY_CORE_PLUGINS": "pulp-cluster"}
SIGNAL_DEADLINE_SECONDS = 1.0


def conv_chain(path: Path, layers: int, channels: int = 16, side: int = 16) -> Path:
    rng = np.random.default_rng(0)
    nodes, weights, previous = [], [], "x"
    for index in range(layers):
        weights.append(numpy_helper.from_array(
            (rng.standard_normal((channels, channels, 3, 3)) * 0.1).astype(np.float32), f"w{index}"))
        output = "y" if index == layers - 1 else f"a{index}"
        nodes.append(helper.make_node("Conv", [previous, f"w{index}"], [output], pads=[1, 1, 1, 1], name=f"conv{index}"))
        previous = output
    shape = [1, channels, side, side]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.fixture(scope="module")
def long_chain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return conv_chain(tmp_path_factory.mktemp("chain") / "chain.onnx", 400)


def _hidden_entries(folder: Path) -> list[str]:
    return sorted(entry.name for entry in folder.iterdir() if entry.name.startswith("."))


def _start_compile(model: Path, output: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "deeploy_core", "compile", str(model), "--platform", "pulp-cluster",
                             "--l1", "16000", "-o", str(output), "--force"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)


def _wait_for_staging(process: subprocess.Popen[str], parent: Path, timeout: float = 60.0) -> None:
    """Until the compile has set up its staging folder (imports and plugin loading are done)."""
    deadline = time.monotonic() + timeout
    while not any(".staging-" in name for name in _hidden_entries(parent)):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the compile never started"
        time.sleep(0.02)


@pytest.mark.parametrize(("signum", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_tiling_ends_the_compile_at_once(long_chain: Path, tmp_path: Path, signum: int,
                                                          exit_code: int) -> None:
    output = tmp_path / "out"
    output.mkdir()
    (output / "Network.c").write_text("/* the user's earlier output */\n")
    process = _start_compile(long_chain, output)
    _wait_for_staging(process, tmp_path)
    time.sleep(1.5)  # well inside the CP-SAT solves: the whole compile takes several seconds
    assert process.poll() is None, "the compile finished before the signal: make the chain longer"
    sent = time.monotonic()
    process.send_signal(signum)
    try:
        stdout, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("the process did not end after the signal")
    elapsed = time.monotonic() - sent
    assert process.returncode == exit_code, stderr
    assert elapsed < SIGNAL_DEADLINE_SECONDS, f"took {elapsed:.2f} s to stop"
    assert stderr == "interrupted\n" and stdout == ""
    assert [p.name for p in output.iterdir()] == ["Network.c"]
    assert (output / "Network.c").read_text() == "/* the user's earlier output */\n"
    assert _hidden_entries(tmp_path) == [], "a temporary folder was left beside the output"


def test_a_killed_compile_leaves_staging_that_the_next_compile_removes(long_chain: Path, tmp_path: Path) -> None:
    output = tmp_path / "out"
    process = _start_compile(long_chain, output)
    _wait_for_staging(process, tmp_path)
    process.kill()  # SIGKILL: no handler runs
    process.communicate()
    left = _hidden_entries(tmp_path)
    assert len(left) == 1 and left[0].startswith(".out.staging-")

    small = conv_chain(tmp_path / "small.onnx", 2, channels=2, side=4)
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(small), "--platform",
                             "pulp-cluster", "-o", str(output)], capture_output=True, text=True, env=ENV)
    assert result.returncode == 0, result.stderr
    assert _hidden_entries(tmp_path) == []
    assert (output / "Network.c").is_file()


def test_staging_of_a_running_process_is_kept(tmp_path: Path) -> None:
    """Only folders of processes that are gone are stale: a concurrent compile's staging stays."""
    target = tmp_path / "out"
    alive = tmp_path / f".out.staging-{os.getppid()}-abc"
    gone = tmp_path / ".out.staging-999999999-abc"
    foreign = tmp_path / ".out.mine"
    for folder in (alive, gone, foreign):
        folder.mkdir()
    assert remove_stale_staging(target) == [gone]
    assert alive.is_dir() and foreign.is_dir() and not gone.exists()


def test_a_kill_in_the_middle_of_the_swap_gives_the_old_output_back(tmp_path: Path) -> None:
    """The swap renames the old output to ``.NAME.old`` first; if nothing replaced it, the next run restores it."""
    target = tmp_path / "out"
    backup = tmp_path / ".out.old"
    backup.mkdir()
    (backup / "Network.c").write_text("old\n")
    with pytest.raises(DeeployError, match="not empty; use --force"):
        with replace_folder(target, force=False):
            pass
    assert (target / "Network.c").read_text() == "old\n"
    assert _hidden_entries(tmp_path) == []


def test_a_solve_that_stops_at_its_limit_states_only_a_proven_bound() -> None:
    stopped = minimum_memory(conv_like(0), time_limit=0.0)
    finished = minimum_memory(conv_like(0))
    assert finished.proven and not stopped.proven
    assert 0 <= stopped.at_least <= finished.at_least


def test_a_tiling_search_that_stops_is_not_reported_as_infeasible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    """A status other than INFEASIBLE (the limit, an interrupt) gives its own error, never the infeasibility one."""
    from deeploy_core.api import CompileOptions, compile_model
    from deeploy_core.plugins import PluginHost
    from deeploy_generic_c import plugin as generic_c_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    monkeypatch.setattr(tiling_solving, "solve_tiling", lambda *args: cp_model.CpResult(None, "UNKNOWN", 0.0))
    model = conv_chain(tmp_path / "small.onnx", 2, channels=2, side=4)
    with pytest.raises(TilingSolveStoppedError, match="not a proof of infeasibility") as stopped:
        compile_model(model, CompileOptions(platform="generic-c", level_sizes={"L1": 4000}), host)
    assert not isinstance(stopped.value, TilingInfeasibleError)


def test_ctrl_c_on_a_terminal_gives_the_cursor_back_and_stops_the_spinner(long_chain: Path, tmp_path: Path) -> None:
    """Issue 33 point 4: the spinner hid the cursor for good and kept redrawing after ``interrupted``."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen([sys.executable, "-m", "deeploy_core", "compile", str(long_chain), "--platform",
                                "pulp-cluster", "--l1", "16000", "-o", str(tmp_path / "out")],
                               stdin=follower, stdout=follower, stderr=follower, env={**ENV, "TERM": "xterm-256color"})
    os.close(follower)
    raw = bytearray()

    def read_until(done: Callable[[], bool], seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline:
            if select.select([leader], [], [], 0.05)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # Linux: the other end closed
                    return
                if not chunk:
                    return
                raw.extend(chunk)

    try:
        read_until(lambda: b"tiling" in raw, 60.0)
        assert b"tiling" in raw and process.poll() is None, "the spinner never showed the tiling stage"
        process.send_signal(signal.SIGINT)
        read_until(lambda: False, 10.0)
    finally:
        os.close(leader)
        process.kill() if process.poll() is None else None
    assert process.wait(timeout=30) == 130
    text = raw.decode("utf-8", errors="replace")
    last = text.rindex("interrupted")
    assert not re.search("[\u2800-\u28ff]", text[last:]), f"the spinner drew again after the last line: {text[last:]!r}"
    assert text.rfind("\x1b[?25h") > text.rfind("\x1b[?25l"), "the cursor stays hidden"
