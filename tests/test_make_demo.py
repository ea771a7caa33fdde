"""``make demo`` (issue 33 point 10): no screens of setuptools notices, and it ends by saying what to do next."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def quiet_build_setting() -> dict[str, str]:
    """The environment the Makefile's install steps run pip with (``QUIET_BUILD := NAME=VALUE``)."""
    match = re.search(r"^QUIET_BUILD := (\w+)=(\S+)$", (REPO / "Makefile").read_text(), re.MULTILINE)
    assert match, "the Makefile has no QUIET_BUILD setting"
    return {match.group(1): match.group(2)}


def editable_build_stderr(tmp_path: Path, extra_env: dict[str, str]) -> str:
    """What setuptools prints while building an editable wheel of a copy of plugins/tetris (as pip does)."""
    project = tmp_path / "tetris"
    shutil.copytree(REPO / "plugins" / "tetris", project, ignore=shutil.ignore_patterns("*.egg-info", "build"))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}
    done = subprocess.run([sys.executable, "-c", "import setuptools.build_meta as b; b.build_editable('wheels')"],
                          cwd=project, env={**env, **extra_env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_the_install_steps_hide_the_editable_install_notice(tmp_path: Path) -> None:
    assert "Editable installation" in editable_build_stderr(tmp_path / "plain", {}), "the notice to hide is there"
    assert "Editable installation" not in editable_build_stderr(tmp_path / "quiet", quiet_build_setting())
    steps = subprocess.run(["make", "-n", "-B", "-C", str(REPO), ".venv/.installed"], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    installs = [line for line in steps if " -e " in line and "pip install" in line]
    assert installs and all(line.startswith("PYTHONWARNINGS=") for line in installs), installs


def test_the_demo_ends_with_the_next_steps() -> None:
    steps = subprocess.run(["make", "-n", "-C", str(REPO), "demo"], capture_output=True, text=True,
                           check=True).stdout
    tail = steps[steps.index("Next steps:"):]
    assert "make -C build/example/generic-c" in tail and "--platform pulp-cluster" in tail
    assert "docs/install.rst" in tail and "make test" in tail
