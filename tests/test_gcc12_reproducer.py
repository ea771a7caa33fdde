"""The minimal C reproducer of the gcc 12 wrong code behind issue 29, and the form the code generator now writes.

``tests/c_reproducers/gcc12_pure_layer.c`` needs nothing of this project and has no undefined behaviour (every
access is a union member access of the member's own type; UBSan is silent): two identical requantisation
functions read an ``int32_t`` tensor and write an ``int8_t`` tensor at two offsets of one block.  Debian 12's
gcc 12.2 on x86-64 at -O2 deletes their calls (docs/correctness.rst follows the chain from IVOPTs' null-based
address to the pure-const/modref verdict).  ``gcc12_pure_layer_fixed.c`` is the same program written the way
``Network.c`` is now written — each tensor a pointer variable of its own — and must be right with every compiler
at every level.  The first test pins the reproducer to the compiler it was found with, so the page stays true:
on another gcc (or another machine) it skips, saying which compiler it found.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "c_reproducers"
EXPECTED = "3328"
LEVELS = ("-O0", "-O1", "-O2", "-O3", "-Os")


def _run(compiler: str, source: Path, flags: list[str], tmp_path: Path) -> str:
    program = tmp_path / f"{source.stem}_{compiler}_{'_'.join(flag.strip('-') for flag in flags)}"
    subprocess.run([compiler, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", *flags, str(source), "-o",
                    str(program)], check=True, capture_output=True)
    return subprocess.run([str(program)], capture_output=True, text=True).stdout.strip()


def _gcc_version() -> str:
    return subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")
def test_the_reproducer_shows_the_gcc_12_bug(tmp_path: Path) -> None:
    version = _gcc_version()
    if not re.fullmatch(r"12\.2\.\d+", version) or platform.machine() != "x86_64":
        pytest.skip(f"the reproducer was cut for gcc 12.2 on x86-64; this is gcc {version} on {platform.machine()}")
    source = HERE / "gcc12_pure_layer.c"
    assert _run("gcc", source, ["-O0"], tmp_path) == EXPECTED
    assert _run("gcc", source, ["-O2"], tmp_path) == "0", "gcc 12.2 -O2 deletes the calls of the 'pure' layers"
    for workaround in ("-fno-ipa-icf", "-fno-ivopts", "-fno-delete-null-pointer-checks"):
        assert _run("gcc", source, ["-O2", workaround], tmp_path) == EXPECTED, workaround
    assert _run("gcc", source, ["-O2", "-fno-strict-aliasing"], tmp_path) == "0", "not a type-based aliasing matter"


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_the_generated_form_is_right_at_every_level(compiler: str, tmp_path: Path) -> None:
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not found (Debian package {compiler})")
    for level in LEVELS + (("-Oz",) if compiler == "clang" else ()):
        assert _run(compiler, HERE / "gcc12_pure_layer_fixed.c", [level], tmp_path) == EXPECTED, level
