"""The generated library cross-compiles for bare-metal cores without a single warning (issue 20, item 3).

Every Deeploy peer network is compiled once, written as an output folder and
built as ``libnetwork.a`` with the folder's own build for a Cortex-M4
(``arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard
-mfpu=fpv4-sp-d16 -Os -Wall -Wextra -Werror``) and, when Debian's RISC-V
bare-metal compiler and picolibc are installed, for rv32imc.  On these
targets ``int32_t`` is ``long`` and ``float`` arithmetic must not be promoted
to ``double``, so a host-clean change can still break the firmware build:
this is where it shows.  The built archive must define the network's entry
points for the target (read back with the target's ``nm``).

The section-size reading that ``bench/cross_size.py`` prints is checked on
a small C file whose sections are known.  CI installs the compilers
(``.ci/run``); elsewhere these tests skip, naming the Debian package.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.cross_targets import CORTEX_M4, TARGETS, CrossTarget, build_library
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.testing.section_sizes import measure, measure_members

ROOT = peer_tests_root(Path(__file__).parent)
PEERS = find_peer_tests(ROOT) if ROOT else []
AVAILABLE = [target for target in TARGETS if target.missing() is None]
ENTRY_POINTS = ("InitNetwork", "RunNetwork")


def _defined_symbols(target: CrossTarget, library: Path) -> set[str]:
    listing = subprocess.run([f"{target.tool_prefix}nm", "-g", "--defined-only", str(library)],
                             capture_output=True, text=True, check=True).stdout
    return {fields[-1] for fields in (line.split() for line in listing.splitlines()) if len(fields) == 3}


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
@pytest.mark.skipif(CORTEX_M4.missing() is not None, reason=f"no Cortex-M4 cross compiler: {CORTEX_M4.missing()}")
@pytest.mark.parametrize("peer", PEERS, ids=[peer.name for peer in PEERS])
def test_peer_library_cross_compiles_without_warnings(peer, generic_c_host: PluginHost, tmp_path: Path) -> None:
    _, generated = compile_model(peer.model, CompileOptions(platform="generic-c", input_types=peer.input_types()),
                                 generic_c_host)
    generated.write(tmp_path)
    for target in AVAILABLE:
        library = build_library(tmp_path, target, build_dir=f"build-{target.name}")
        missing = set(ENTRY_POINTS) - _defined_symbols(target, library)
        assert not missing, f"{target.name}: {library.name} does not define {sorted(missing)}"
        assert measure(target.size_tool, library).text > 0


SIZED_SOURCE = """\
#include <stdint.h>
const uint8_t weights[100] = {1};
int32_t counter = 7;
int32_t scratch[16];
int32_t bump(int32_t step) { counter += step; scratch[counter & 15] = step; return counter + weights[step & 63]; }
"""


@pytest.mark.parametrize("target", TARGETS, ids=[target.name for target in TARGETS])
def test_section_sizes_separate_code_weights_and_ram(target: CrossTarget, tmp_path: Path) -> None:
    if target.missing() is not None:
        pytest.skip(f"no {target.name} cross compiler: {target.missing()}")
    source = tmp_path / "sized.c"
    source.write_text(SIZED_SOURCE, encoding="utf-8")
    obj = tmp_path / "sized.o"
    subprocess.run([target.compiler, *target.cflags, "-c", str(source), "-o", str(obj)], check=True)
    sizes = measure(target.size_tool, obj)
    assert sizes.rodata >= 100, sizes
    assert sizes.data >= 4, sizes
    assert sizes.bss >= 64, sizes
    assert 0 < sizes.text < 100, sizes


@pytest.mark.parametrize("target", TARGETS, ids=[target.name for target in TARGETS])
def test_archive_sizes_are_split_by_member(target: CrossTarget, tmp_path: Path) -> None:
    """``bench/cross_size.py`` tells the network's objects from the kernels' by member name."""
    if target.missing() is not None:
        pytest.skip(f"no {target.name} cross compiler: {target.missing()}")
    (tmp_path / "sized.c").write_text(SIZED_SOURCE, encoding="utf-8")
    (tmp_path / "other.c").write_text("int other(int x) { return x * 3; }\n", encoding="utf-8")
    for stem in ("sized", "other"):
        subprocess.run([target.compiler, *target.cflags, "-c", f"{stem}.c", "-o", f"{stem}.o"], check=True,
                       cwd=tmp_path)
    subprocess.run([target.archiver, "rcs", "lib.a", "sized.o", "other.o"], check=True, cwd=tmp_path)
    members = measure_members(target.size_tool, tmp_path / "lib.a")
    assert sorted(members) == ["other.o", "sized.o"]
    assert members["sized.o"] == measure(target.size_tool, tmp_path / "sized.o")
    assert members["other.o"].rodata == 0 and members["other.o"].text > 0
    assert members["sized.o"] + members["other.o"] == measure(target.size_tool, tmp_path / "lib.a")


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
@pytest.mark.skipif(CORTEX_M4.missing() is not None, reason=f"no Cortex-M4 cross compiler: {CORTEX_M4.missing()}")
def test_the_readme_cross_compile_line_builds_a_hard_float_cortex_m4_library(generic_c_host: PluginHost,
                                                                           tmp_path: Path) -> None:
    """Issue 33 point 10: the folder's README said ``make CC=arm-none-eabi-gcc`` without ``AR=`` (the host's
    ``ar`` then packs ARM objects) and without the FPU flags; its line is run here as written."""
    import shlex

    peer = next(peer for peer in PEERS if peer.name == "Kernels/FP32/Conv/Regular_2D_Bias")
    _, generated = compile_model(peer.model, CompileOptions(platform="generic-c"), generic_c_host)
    generated.write(tmp_path)
    lines = (tmp_path / "README.md").read_text().splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("make CC=arm-none-eabi-gcc"))
    command = lines[start].rstrip("\\").strip() + " " + lines[start + 1].split("#")[0].strip()
    argv = shlex.split(command)
    assert "AR=arm-none-eabi-ar" in argv and any("-mfloat-abi=hard" in arg for arg in argv), argv
    built = subprocess.run([*argv, "-C", str(tmp_path)], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    attributes = subprocess.run(["arm-none-eabi-readelf", "-A", str(tmp_path / "libnetwork.a")],
                                capture_output=True, text=True, check=True).stdout
    assert "Tag_ABI_VFP_args: VFP registers" in attributes and "Tag_CPU_name: \"7E-M\"" in attributes, attributes

