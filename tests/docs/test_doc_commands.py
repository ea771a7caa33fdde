"""Every reference command of the docs and the README (``sh`` blocks) runs, each in a fresh folder.

A line of an ``sh`` block is an example to copy, not a step of a script, so
each runs alone, with this run's environment (every bundled plugin installed)
and the example network as ``model.onnx``; it must exit with 0.  How each
program is run (and why benchmarks and ``make`` are only checked) is in
:mod:`tests.docs.doc_shell`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.doc_blocks import all_blocks
from tests.docs.doc_commands import DocCommand, sh_commands
from tests.docs.doc_shell import DocShell
from tests.docs.workspace import fresh_workspace

COMMANDS = [command for block in all_blocks() if block.language == "sh" for command in sh_commands(block)]


@pytest.mark.parametrize("command", COMMANDS, ids=[command.where for command in COMMANDS])
def test_command_runs(command: DocCommand, docs_data: Path, tmp_path: Path) -> None:
    folder = fresh_workspace(docs_data, tmp_path / "work")
    result = DocShell(folder, tmp_path / "scratch").run(command)
    output = "\n".join((result.stdout + result.stderr).splitlines()[-30:])
    assert result.returncode == 0, f"{command.where}: {command.text!r} exited with {result.returncode}:\n{output}"
