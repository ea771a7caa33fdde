"""The core with only this plugin and its dependency, generic-c, installed: a real, offline ``pip install``.

:func:`deeploy_core.testing.isolated_install.isolated_venv` gives a venv in
which exactly these three distributions exist (not editable: what a user's
``pip install`` puts in site-packages).  The Cortex-M platforms take their
base from the installed generic-c and their board files (MPS2 start-up code
and linker script) from deeploy_core's package data, so this is where a
missing dependency or data file would show: the listing, a compile, and,
where the cross compiler and QEMU are installed, the folder's ``make test``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from deeploy_core.testing.emulated_targets import CORTEX_M4_MPS2, PASSED_LINE
from deeploy_core.testing.isolated_install import isolated_venv

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def lone_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cortex-m-alone")
    return isolated_venv(root, [REPO, REPO / "plugins" / "generic_c", REPO / "plugins" / "cortex_m"])


def _run(python: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` without this session's plugin allow-list or import path (the venv's own packages only)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("DEEPLOY_CORE_PLUGINS", "PYTHONPATH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run([str(python), *args], capture_output=True, text=True, env=env, cwd=cwd)


def test_the_plugin_is_listed_with_both_platforms(lone_venv: Path) -> None:
    result = _run(lone_venv, "-m", "deeploy_core", "plugins")
    assert result.returncode == 0, result.stderr
    blocks = [block for block in result.stdout.strip().split("\n\n") if block]
    names = {line.split(":", 1)[1].strip(): block for block in blocks for line in block.splitlines()
             if line.startswith("plugin:")}
    assert set(names) == {"cortex-m", "generic-c"}, result.stdout
    fields = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in names["cortex-m"].splitlines()}
    assert fields["distribution"] == "deeploy-cortex-m" and fields["status"] == "ok", result.stdout
    assert fields["provides"] == "platform: cortex-m33, cortex-m4, cortex-m55, cortex-m7", result.stdout


@pytest.mark.parametrize(("platform", "board", "script"), [("cortex-m4", "mps2-an386", "mps2_an386.ld"),
                                                            ("cortex-m55", "mps3-an547", "mps3_an547.ld")])
def test_a_folder_compiles_and_passes_make_test(platform: str, board: str, script: str, lone_venv: Path,
                                                tmp_path: Path) -> None:
    """The installed wheel carries what a folder copies: the core's MPS2 script, the plugin's own for the M55."""
    model, inputs = tmp_path / "tiny.onnx", tmp_path / "inputs.npz"
    made = _run(lone_venv, str(REPO / "examples" / "make_tiny_cnn.py"), str(model))
    assert made.returncode == 0, made.stderr
    np.savez(inputs, input=np.linspace(-1.0, 1.0, 3 * 32 * 32, dtype=np.float32).reshape(1, 3, 32, 32))
    out = tmp_path / "out"
    compiled = _run(lone_venv, "-m", "deeploy_core", "compile", str(model), "-o", str(out), "--platform", platform,
                    "--inputs", str(inputs))
    assert compiled.returncode == 0, compiled.stderr
    makefile = (out / "Makefile").read_text(encoding="utf-8")
    assert f"-M {board}" in makefile and (out / "board" / script).is_file(), sorted(os.listdir(out / "board"))
    missing = CORTEX_M4_MPS2.missing()
    if missing is not None:
        pytest.skip(f"compiled; cannot run make test on the MPS2 board: {missing}")
    tested = subprocess.run(["make", "-s", "-C", str(out), "test"], capture_output=True, text=True, timeout=120,
                            env={key: value for key, value in os.environ.items()
                                 if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CC", "AR", "CFLAGS")})
    assert tested.returncode == 0 and PASSED_LINE in tested.stdout.splitlines(), tested.stdout + tested.stderr
