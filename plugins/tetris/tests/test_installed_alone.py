"""The core with only this allocator plugin (and the generic C platform) installed: a real ``pip install``.

The venv sees this environment's third-party packages (onnx, ortools, …)
through a filtered copy of its site directory that leaves out every deeploy
distribution, so exactly the three distributions installed here exist in it.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _filtered_site(directory: Path) -> Path:
    """Links to every entry of this environment's site directories except deeploy's own."""
    directory.mkdir()
    for parent in dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["purelib"]]):
        for entry in sorted(Path(parent).iterdir()):
            if "deeploy" in entry.name.lower() or (directory / entry.name).exists():
                continue
            (directory / entry.name).symlink_to(entry)
    return directory


@pytest.fixture(scope="module")
def lone_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tetris-alone")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    target_site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip()
    shared = _filtered_site(root / "shared-site")
    Path(target_site, "parent_packages.pth").write_text(f"import site; site.addsitedir({str(shared)!r})\n")
    sources = root / "sources"
    core = sources / "core"
    core.mkdir(parents=True)
    shutil.copy(REPO / "pyproject.toml", core)
    shutil.copy(REPO / "README.md", core)
    shutil.copytree(REPO / "deeploy_core", core / "deeploy_core", ignore=shutil.ignore_patterns("__pycache__"))
    plugins = [shutil.copytree(REPO / "plugins" / name, sources / name, ignore=shutil.ignore_patterns(
        "__pycache__", "*.egg-info", "build", "tests")) for name in ("generic_c", "tetris")]
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-index", "--no-build-isolation", "--no-cache-dir", str(core), *map(str, plugins)],
                   check=True, cwd=root)
    return python


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
