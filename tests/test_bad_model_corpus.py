"""Every model of the bad-model corpus is refused with exit code 2 and one line naming what is wrong.

The corpus (``tests/corpus/bad``) is written by ``tests/corpus/make_bad_corpus.py``; the first test checks the
committed files are exactly what the script writes.  Each case is compiled in-process through the command line (the first few also by the real command in a child
process, so a traceback or a stray file would show there too), with ``--force`` over an existing output folder,
and run in-process through ``analyze``, ``validate`` and the cluster platform's ``compile``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from deeploy_core.cli import cli

CORPUS = Path(__file__).resolve().parent / "corpus"
BAD = CORPUS / "bad"
CASES = yaml.safe_load((BAD / "cases.yaml").read_text(encoding="utf-8"))
NEEDS_GENERIC_C = pytest.mark.skipif(importlib.util.find_spec("deeploy_generic_c") is None,
                                     reason="the generic-c platform plugin (plugins/generic_c) is not installed")


def _load_script():
    spec = importlib.util.spec_from_file_location("make_bad_corpus", CORPUS / "make_bad_corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (symbolic links are not followed)."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_committed_corpus_is_what_the_script_writes(tmp_path: Path) -> None:
    made = _load_script().write_corpus(tmp_path / "bad")
    assert len(made) >= 40
    assert _tree(tmp_path / "bad") == _tree(BAD), "tests/corpus/bad is stale: run python tests/corpus/make_bad_corpus.py"


def _check_error_line(stderr: str, case: dict) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, f"{case['file']}: expected one line, got:\n{stderr}"
    line = lines[0]
    assert line.startswith("error: "), line
    missing = [word for word in case["mentions"] if word not in line]
    assert not missing, f"{case['file']}: {line!r} does not mention {missing}"
    return line


def _refused_compile(case: dict, tmp_path: Path, in_child_process: bool) -> tuple[int, str, str]:
    """``compile --force`` of the case over an existing output folder: exit code, stdout, stderr."""
    output = tmp_path / "out"
    arguments = ["compile", str(BAD / case["file"]), "--platform", "generic-c", "-o", str(output), "--force"]
    if in_child_process:
        result = subprocess.run([sys.executable, "-m", "deeploy_core", *arguments], capture_output=True, text=True,
                                cwd=tmp_path, env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"})
        return result.returncode, result.stdout, result.stderr
    invoked = CliRunner().invoke(cli, arguments)
    assert invoked.exception is None or isinstance(invoked.exception, SystemExit), (
        f"{case['file']}: {invoked.exception!r}")
    return invoked.exit_code, invoked.stdout, invoked.stderr


CHILD_PROCESS_CASES = 6
"""How many cases (the first of the corpus) also run as the real command in a child process, as a user runs it;
all of them run in-process (a child process per case cost CI two minutes)."""


COMPILE_RUNS = [pytest.param(case, False, id=f"{case['file']}-in-process") for case in CASES] + [
    pytest.param(case, True, id=f"{case['file']}-child-process") for case in CASES[:CHILD_PROCESS_CASES]]


@NEEDS_GENERIC_C
@pytest.mark.parametrize(("case", "in_child_process"), COMPILE_RUNS)
def test_compile_refuses_in_one_line_and_leaves_everything_as_it_was(case: dict, in_child_process: bool,
                                                                     tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPLOY_CORE_PLUGINS", "generic-c")
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "out"
    output.mkdir()
    (output / "Network.c").write_text("/* the user's earlier build */\n", encoding="utf-8")
    before_work, before_corpus = _tree(tmp_path), _tree(BAD)
    exit_code, stdout, stderr = _refused_compile(case, tmp_path, in_child_process)
    assert exit_code == 2, f"{case['file']}: exit {exit_code}\n{stdout}\n{stderr}"
    assert stdout == ""
    _check_error_line(stderr, case)
    assert _tree(tmp_path) == before_work, "files changed outside (or inside) the output folder"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"], "a staging folder was left behind"
    assert _tree(BAD) == before_corpus, "the model's folder changed"


@pytest.mark.parametrize("command", ["analyze", "validate"])
@NEEDS_GENERIC_C
@pytest.mark.parametrize("case", CASES, ids=[case["file"] for case in CASES])
def test_other_commands_refuse_in_one_line(case: dict, command: str, monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    monkeypatch.setenv("DEEPLOY_CORE_PLUGINS", "generic-c")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [command, str(BAD / case["file"]), "--platform", "generic-c"])
    assert result.exit_code == 2, (result.output, result.exception)
    _check_error_line(result.stderr, case)
    assert list(tmp_path.iterdir()) == [], "nothing may be written when the model is refused"


@pytest.mark.skipif(importlib.util.find_spec("deeploy_pulp_cluster") is None,
                    reason="the pulp-cluster platform plugin (plugins/pulp_cluster) is not installed")
@pytest.mark.parametrize("case", CASES, ids=[case["file"] for case in CASES])
def test_cluster_platform_refuses_in_one_line(case: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DEEPLOY_CORE_PLUGINS", "pulp-cluster")
    result = CliRunner().invoke(cli, ["compile", str(BAD / case["file"]), "--platform", "pulp-cluster",
                                      "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, (result.output, result.exception)
    line = _check_error_line(result.stderr, {**case, "mentions": [m for m in case["mentions"] if m != "generic-c"]})
    assert "generic-c" not in line
    assert list(tmp_path.iterdir()) == []
