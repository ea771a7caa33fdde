"""CMSIS-NN is the user's: the folder's Makefile and CMakeLists.txt find it through ``CMSIS_NN_PATH``.

A folder whose network calls a CMSIS-NN kernel builds those sources from the
variable's folder; without it, ``make`` and ``cmake`` stop with one line that
says where to get CMSIS-NN (``make clean`` still works).  The compile option
``cmsis_nn_path`` writes the default into both build files, so the build then
needs no variable, and a path without CMSIS-NN is refused at compile time.
The CMake build is a real cross build with the user's toolchain settings.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from deeploy_core.testing.cli_outcomes import CliLab

CMSIS_NN = Path(os.environ.get("CMSIS_NN_PATH") or Path(__file__).resolve().parents[4] / "shared/third-party/cmsis-nn")
QUANT = ("tensorflow", "tf2onnx", "ai_edge_litert")
ARCH = "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
URL = "https://github.com/ARM-software/CMSIS-NN"

pytestmark = [
    pytest.mark.skipif(not (CMSIS_NN / "Include/arm_nnfunctions.h").is_file(),
                       reason=f"no CMSIS-NN at {CMSIS_NN} (set CMSIS_NN_PATH or check out ../shared)"),
    pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None or shutil.which("make") is None,
                       reason="arm-none-eabi-gcc or make not installed (Debian: gcc-arm-none-eabi, make)"),
    pytest.mark.skipif(any(importlib.util.find_spec(module) is None for module in QUANT),
                       reason=f"the quant extra ({', '.join(QUANT)}) is not installed: the TFLite model needs it"),
]


def _environment() -> dict[str, str]:
    """This process's environment without CMSIS_NN_PATH or an outer make's variables."""
    return {name: value for name, value in os.environ.items()
            if name not in ("CMSIS_NN_PATH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def _compile(tmp_path: Path, name: str, *options: str) -> tuple[bool, str, Path]:
    from plugins.cortex_m.tests.cmsis_tflite_cases import layer_models

    out = tmp_path / name
    lab = CliLab(tmp_path / f"runs-{name}", {"CMSIS_NN_PATH": ""})
    outcome = lab.invoke(["compile", str(layer_models() / "conv_relu.onnx"), "-o", str(out), "--quiet",
                          "--platform", "cortex-m4", "--quantization", "fixed-point", *options])
    return outcome.ok, outcome.describe(), out


def _make(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-s", "-C", str(folder), *arguments], capture_output=True, text=True,
                          env=_environment())


def test_make_needs_the_path_and_says_where_to_get_cmsis_nn(tmp_path: Path) -> None:
    ok, said, out = _compile(tmp_path, "plain")
    assert ok, said
    missing = _make(out)
    lines = [line for line in missing.stderr.splitlines() if line.strip()]
    assert missing.returncode != 0 and len(lines) == 1 and URL in lines[0] and "CMSIS_NN_PATH" in lines[0], lines
    assert _make(out, "clean").returncode == 0
    built = _make(out, f"CMSIS_NN_PATH={CMSIS_NN}")
    assert built.returncode == 0, built.stderr
    symbols = subprocess.run(["arm-none-eabi-nm", str(out / "libnetwork.a")], capture_output=True, text=True).stdout
    assert " T arm_convolve_wrapper_s8" in symbols


def test_the_option_writes_the_default_and_a_wrong_path_is_refused(tmp_path: Path) -> None:
    ok, said, out = _compile(tmp_path, "option", "--option", f"cmsis_nn_path={CMSIS_NN}")
    assert ok, said
    assert f"CMSIS_NN_PATH ?= {CMSIS_NN}" in (out / "Makefile").read_text(encoding="utf-8")
    assert f'set(CMSIS_NN_PATH "{CMSIS_NN}" CACHE PATH' in (out / "CMakeLists.txt").read_text(encoding="utf-8")
    built = _make(out)  # no variable: the option's default builds
    assert built.returncode == 0, built.stderr

    ok, said, _ = _compile(tmp_path, "wrong", "--option", f"cmsis_nn_path={tmp_path}")
    assert not ok and "arm_nnfunctions.h" in said and URL in said, said


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed (Debian: cmake)")
def test_cmake_refuses_a_missing_path_and_cross_builds_with_one(tmp_path: Path) -> None:
    ok, said, out = _compile(tmp_path, "cmake")
    assert ok, said
    refused = subprocess.run(["cmake", "-S", str(out), "-B", str(tmp_path / "bad"), "-DCMSIS_NN_PATH=/nonexistent"],
                             capture_output=True, text=True, env=_environment())
    assert refused.returncode != 0 and URL in refused.stderr
    configure = ["cmake", "-S", str(out), "-B", str(tmp_path / "good"), f"-DCMSIS_NN_PATH={CMSIS_NN}",
                 "-DCMAKE_SYSTEM_NAME=Generic", "-DCMAKE_C_COMPILER=arm-none-eabi-gcc", f"-DCMAKE_C_FLAGS={ARCH}",
                 "-DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY"]
    configured = subprocess.run(configure, capture_output=True, text=True, env=_environment())
    assert configured.returncode == 0, configured.stderr
    built = subprocess.run(["cmake", "--build", str(tmp_path / "good")], capture_output=True, text=True,
                           env=_environment())
    assert built.returncode == 0, built.stdout + built.stderr
    symbols = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "good" / "libnetwork.a")], capture_output=True,
                             text=True).stdout
    assert " T arm_convolve_wrapper_s8" in symbols
