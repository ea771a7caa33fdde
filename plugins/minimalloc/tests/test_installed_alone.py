"""The core with only this allocator plugin (and the generic C platform), installed as if no C compiler existed.

``CC=false`` makes the optional C extension fail to build; the install must
still succeed, the plugin must run on its pure-Python backend, and asking for
an allocator that is not installed must name the ones that are.
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
    root = tmp_path_factory.mktemp("minimalloc-alone")
    return isolated_venv(root, [REPO, REPO / "plugins" / "generic_c", REPO / "plugins" / "minimalloc"],
                         env={"CC": "false", "LDSHARED": "false"})


def _run(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("DEEPLOY_CORE_PLUGINS", "DEEPLOY_MINIMALLOC_BACKEND")}
    return subprocess.run([str(python), *args], capture_output=True, text=True, env=env)


def test_without_a_compiler_the_install_falls_back_to_python(lone_venv: Path) -> None:
    probe = _run(lone_venv, "-c", "import deeploy_minimalloc as m; print(m.native_available(), m.resolve_backend())")
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["False", "python"]
    forced = _run(lone_venv, "-c", "import deeploy_minimalloc as m; m.MiniMallocAllocator(backend='native')")
    assert forced.returncode != 0 and "the native backend is not built in this installation" in forced.stderr


def test_only_the_installed_plugins_are_discovered(lone_venv: Path) -> None:
    result = _run(lone_venv, "-m", "deeploy_core", "plugins", "--json")
    assert result.returncode == 0, result.stderr
    listed = {entry["name"]: entry for entry in json.loads(result.stdout)}
    assert set(listed) == {"generic-c", "minimalloc"}
    assert listed["minimalloc"]["extensions"] == {"allocator": ["minimalloc"]}


def test_the_allocator_compiles_and_a_missing_one_is_named_with_the_installed_ones(
        lone_venv: Path, tmp_path: Path) -> None:
    model = tmp_path / "tiny.onnx"
    subprocess.run([str(lone_venv), str(REPO / "examples" / "make_tiny_cnn.py"), str(model)], check=True,
                   capture_output=True)
    compiled = _run(lone_venv, "-m", "deeploy_core", "compile", str(model), "-o", str(tmp_path / "out"),
                    "--allocator", "minimalloc")
    assert compiled.returncode == 0, compiled.stderr
    memory = json.loads((tmp_path / "out" / "report.json").read_text())["memory"]
    assert memory["allocator"] == "minimalloc" and memory["arena_bytes"] == memory["lower_bound_bytes"]
    missing = _run(lone_venv, "-m", "deeploy_core", "compile", str(model), "-o", str(tmp_path / "again"),
                   "--allocator", "tetris-random")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert missing.stderr.strip() == "error: no allocator named 'tetris-random' (available: first-fit, minimalloc)"
    assert not (tmp_path / "again").exists()
