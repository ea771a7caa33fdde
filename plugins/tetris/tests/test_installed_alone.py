"""The core with only this allocator plugin (and the generic C platform) installed: a real ``pip install``.

:func:`deeploy_core.testing.isolated_install.isolated_venv` gives a venv in
which exactly the three distributions installed here exist.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from deeploy_core.testing.isolated_install import isolated_venv

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def lone_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tetris-alone")
    return isolated_venv(root, [REPO, REPO / "plugins" / "generic_c", REPO / "plugins" / "tetris"])


def _cli(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "DEEPLOY_CORE_PLUGINS"}
    return subprocess.run([str(python), "-m", "deeploy_core", *args], capture_output=True, text=True, env=env)


def test_only_the_installed_plugins_are_discovered(lone_venv: Path) -> None:
    result = _cli(lone_venv, "plugins", "--json")
    assert result.returncode == 0, result.stderr
    listed = {entry["name"]: entry for entry in json.loads(result.stdout)}
    assert set(listed) == {"generic-c", "tetris"}
    assert listed["tetris"]["extensions"] == {"allocator": ["tetris-coopt", "tetris-random"]}


def test_an_installed_allocator_compiles_and_a_missing_one_is_named_with_the_installed_ones(
        lone_venv: Path, tmp_path: Path) -> None:
    model = tmp_path / "tiny.onnx"
    subprocess.run([str(lone_venv), str(REPO / "examples" / "make_tiny_cnn.py"), str(model)], check=True,
                   capture_output=True)
    compiled = _cli(lone_venv, "compile", str(model), "-o", str(tmp_path / "out"), "--allocator", "tetris-coopt")
    assert compiled.returncode == 0, compiled.stderr
    assert json.loads((tmp_path / "out" / "report.json").read_text())["memory"]["allocator"] == "tetris-coopt"
    missing = _cli(lone_venv, "compile", str(model), "-o", str(tmp_path / "again"), "--allocator", "minimalloc")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert missing.stderr.strip() == "error: no allocator named 'minimalloc' (available: first-fit, tetris-coopt, tetris-random)"
    assert not (tmp_path / "again").exists()
