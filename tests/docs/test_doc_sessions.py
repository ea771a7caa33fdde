"""Every page runs as a reader would follow it: files written, Python and doctests run, sessions replayed.

One test per page, in a fresh folder holding the example network
(:mod:`tests.docs.workspace`).  A page that installs packages in its sessions
(``pip install``) gets a throw-away environment: the one its ``python -m venv``
line creates, or — for pages that start from an installed deeploy-core, like
the tutorial — one holding the core and the generic C plugin, as
docs/install.rst leaves it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from deeploy_core.network import GeneratedNetwork
from tests.docs.c_fragments import run_fragment
from tests.docs.doc_blocks import REPO, CodeBlock, page_name, pages, read_blocks
from tests.docs.doc_commands import console_commands
from tests.docs.doc_shell import DocShell, Environment
from tests.docs.page_session import RUN_HERE, PageSession
from tests.docs.workspace import fresh_workspace

RUNNABLE_PAGES = [path for path in pages()
                  if any(block.language in RUN_HERE or block.caption for block in read_blocks(path))]


def _session_commands(blocks: list[CodeBlock]) -> list[tuple[str, ...]]:
    return [command.argv for block in blocks if block.language == "console" for command in console_commands(block)]


def _starting_environment(blocks: list[CodeBlock], scratch: Path) -> Environment:
    commands = _session_commands(blocks)
    installs = any(argv[0].removeprefix(".venv/bin/") == "pip" for argv in commands)
    makes_venv = any(argv[1:3] == ("-m", "venv") for argv in commands)
    if installs and not makes_venv:
        return Environment.throw_away(scratch / "environment", [REPO, REPO / "plugins" / "generic_c"])
    return Environment.of_this_run()


@pytest.mark.parametrize("path", RUNNABLE_PAGES, ids=page_name)
def test_page_runs(path: Path, docs_data: Path, docs_inputs: dict[str, np.ndarray],
                   docs_golden: list[np.ndarray], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                   request: pytest.FixtureRequest) -> None:
    blocks = read_blocks(path)
    folder = fresh_workspace(docs_data, tmp_path / "work")
    shell = DocShell(folder, tmp_path / "scratch", _starting_environment(blocks, tmp_path / "scratch"))

    def c_fragment(block: CodeBlock) -> None:
        generated: GeneratedNetwork = request.getfixturevalue("example_network")
        [image] = docs_inputs.values()
        scores = run_fragment(block.text, generated, image, tmp_path / f"fragment-{block.line}")
        np.testing.assert_allclose(scores, docs_golden[0].ravel(), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{block.where}: the fragment's scores differ from ONNX Runtime")

    monkeypatch.chdir(folder)
    PageSession(shell, c_fragment).run(blocks)
