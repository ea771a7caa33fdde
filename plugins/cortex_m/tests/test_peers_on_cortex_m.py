"""Every Deeploy peer network passes its self-test on the emulated Cortex-M4 and M55, built by its folder's
``make test``.

Issue 35 asks that an output folder for ``--platform cortex-m4`` cross-build
its self-test and run it on QEMU with nothing but ``make test``.  So each peer
network (all of them, as :func:`find_peer_tests` discovers them) is compiled
with ``--inputs/--outputs`` (Deeploy's golden outputs become the self-test),
and the folder's own Makefile does the rest: the board's cross compiler,
start-up file and linker script, ``-O2`` (the Makefile's default), then QEMU's
``mps2-an386``.  The verdict is the self-test's default rule: integer outputs
bit-exact (checked here once more on the printed errors), float outputs within
1e-4 of the expected values' scale with a cosine of at least 0.9999.  Where a
folder uses CMSIS-NN, ``CMSIS_NN_PATH`` is the user's copy (``$CMSIS_NN_PATH``
or ``../shared/third-party/cmsis-nn``).

Every peer also runs on ``cortex-m55`` (QEMU's ``mps3-an547``: CMSIS-NN's
Helium path, and GCC's auto-vectorisation of generic C for Helium at ``-O2``),
a few on ``cortex-m7`` (``mps2-an500``) and ``cortex-m33`` (``mps2-an505``, the Armv8-M core of
RP2350 and nRF5340), and a probe program shows that each
board is its core (CPUID), that the M55's has Helium with floating point
(MVFR1), and that the RAM its linker script writes is RAM there.  Without
``arm-none-eabi-gcc``, newlib, ``qemu-system-arm`` or ``../shared`` the tests
skip and say which.

Each network is one test (pytest-xdist spreads them over the cores); its
folder is built once, by one ``make``, and nothing is shared between tests,
since every folder carries only the kernels its network calls.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from deeploy_core.testing.cli_outcomes import CliLab
from deeploy_core.testing.emulated_targets import CORTEX_M4_MPS2, PASSED_LINE
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root
from deeploy_cortex_m.cmsis_nn import MARKER
from deeploy_cortex_m.names import CMSIS_NN_VARIABLE, CORTEX_M4, CORTEX_M7, CORTEX_M33, CORTEX_M55

ROOT = peer_tests_root(Path(__file__).parent)
PEERS = {peer.name: peer for peer in find_peer_tests(ROOT)} if ROOT else {}
MISSING_PEERS = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"
NO_BOARD = CORTEX_M4_MPS2.missing()
"""Why no program can be cross-built and run on the MPS2 boards here (compiler, newlib with rdimon, QEMU), or None.
The check links an empty program with the same compiler, specs and emulator the folders' Makefiles use."""
SELF_TEST_TIMEOUT = 120.0
"""Seconds for one folder's ``make test`` (build and QEMU run); the slowest peer takes a few seconds."""

FEW_PEERS = ("Models/MLPerf/KeywordSpotting", "Models/miniMobileNet", "Kernels/Integer/Softmax/Regular",
            "Kernels/FP32/Conv/Regular_2D_Bias", "Kernels/FP32/LayerNorm")
"""On the Cortex-M7 and M33 too: two quantised models, an integer kernel, float kernels calling newlib's math."""

INTEGER_LINE = re.compile(r"^output '.*': .*max abs error (\S+), .*mismatches (\d+)/")
"""The self-test's line per output (``selftest/dc_selftest_main.c``): the largest error and the mismatches."""


def cmsis_nn_root() -> Path | None:
    """The user's CMSIS-NN copy for the builds: ``$CMSIS_NN_PATH``, else ``shared/third-party/cmsis-nn`` beside the
    peer tests' ``shared`` folder; None when neither holds CMSIS-NN."""
    candidates = [Path(os.environ[CMSIS_NN_VARIABLE])] if os.environ.get(CMSIS_NN_VARIABLE) else []
    if ROOT is not None:
        candidates.append(ROOT.parents[1] / "third-party" / "cmsis-nn")
    return next((path for path in candidates if (path / MARKER).is_file()), None)


CMSIS_NN = cmsis_nn_root()


def compile_for(platform: str, peer: PeerTest, output: Path) -> Path:
    """``deeploy-core compile --platform PLATFORM --inputs --outputs`` in-process with the two plugins the platform
    needs (so other installed plugins cannot change the result); the folder it wrote."""
    lab = CliLab(output.parent / "runs", {"DEEPLOY_CORE_PLUGINS": "generic-c,cortex-m"})
    outcome = lab.invoke(["compile", str(peer.model), "-o", str(output), "--quiet", "--platform", platform,
                          "--inputs", str(peer.inputs), "--outputs", str(peer.outputs)])
    assert outcome.ok, outcome.describe()
    return output


def make_test(folder: Path, *goals: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """The folder's ``make`` (default goal ``test``) as a user runs it, with CMSIS-NN's root when the folder uses it.

    The outer make's job server and level are dropped (``make test`` of this project runs pytest), and a build
    that needs CMSIS-NN where no copy is found skips the test rather than failing it.
    """
    makefile = (folder / "Makefile").read_text(encoding="utf-8")
    needs_cmsis_nn = f"$({CMSIS_NN_VARIABLE})/" in makefile
    if needs_cmsis_nn and CMSIS_NN is None:
        pytest.skip(f"the folder builds CMSIS-NN sources: set {CMSIS_NN_VARIABLE} to a CMSIS-NN copy")
    if CMSIS_NN is not None:
        variables = {CMSIS_NN_VARIABLE: str(CMSIS_NN), **variables}
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CFLAGS", "CC", "AR")}
    command = ["make", "--no-print-directory", "-C", str(folder), *(goals or ("test",)),
               *(f"{name}={value}" for name, value in variables.items())]
    try:
        return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=SELF_TEST_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as stopped:
        pytest.fail(f"make {' '.join(goals or ('test',))} in {folder} did not finish in {SELF_TEST_TIMEOUT:.0f} s:\n"
                    f"{stopped.stdout!r}\n{stopped.stderr!r}")


def assert_self_test_passed(peer: PeerTest, run: subprocess.CompletedProcess[str]) -> None:
    """Exit status 0 and the passed line; an integer network's every output also exactly equal."""
    described = f"{peer.name}: make test -> exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert run.returncode == 0 and PASSED_LINE in run.stdout.splitlines(), described
    outputs = [match for match in map(INTEGER_LINE.match, run.stdout.splitlines()) if match]
    assert outputs, described
    if not peer.is_float:
        assert all(float(match[1]) == 0 and match[2] == "0" for match in outputs), described


skip_without_board = pytest.mark.skipif(NO_BOARD is not None, reason=f"cannot run on the MPS2 boards: {NO_BOARD}")
skip_without_peers = pytest.mark.skipif(ROOT is None, reason=MISSING_PEERS)


def test_every_peer_is_a_case() -> None:
    """Discovered, not listed: a peer network added to ../shared becomes a case without editing this file."""
    if ROOT is None:
        pytest.skip(MISSING_PEERS)
    assert len(PEERS) >= 80 and set(FEW_PEERS) <= set(PEERS), sorted(set(FEW_PEERS) - set(PEERS))


BOARDS = {CORTEX_M4: ("mps2-an386", "mps2_an386.ld"), CORTEX_M7: ("mps2-an500", "mps2_an386.ld"),
          CORTEX_M33: ("mps2-an505", "mps2_an505.ld"), CORTEX_M55: ("mps3-an547", "mps3_an547.ld")}
"""Platform -> the QEMU machine its folder's ``make test`` runs and the linker script in its ``board/``."""
CASES = [(platform, name) for platform in (CORTEX_M4, CORTEX_M55) for name in sorted(PEERS)] + \
        [(platform, name) for platform in (CORTEX_M7, CORTEX_M33) for name in FEW_PEERS if name in PEERS]
"""Every peer on the M4 and the M55, the few on the M7 and the M33."""


@skip_without_peers
@skip_without_board
@pytest.mark.parametrize(("platform", "name"), CASES)
def test_peer_self_test_passes_on_the_platforms_emulated_core(platform: str, name: str, tmp_path: Path) -> None:
    peer = PEERS[name]
    folder = compile_for(platform, peer, tmp_path / "out")
    machine, script = BOARDS[platform]
    makefile = (folder / "Makefile").read_text(encoding="utf-8")
    assert f"-M {machine}" in makefile and f"-mcpu={platform}" in makefile and (folder / "board" / script).is_file()
    assert_self_test_passed(peer, make_test(folder))


MEMORY_PROBE = r"""
#include <stdint.h>
#include <stdio.h>

#define CPUID (*(volatile uint32_t *)0xE000ED00u)
#define MVFR1 (*(volatile uint32_t *)0xE000EF44u) /* bits 11:8: Helium (0 none, 1 integer, 2 integer and float) */

/* The last words of the RAMs the linker script writes, given with -D at the build. */
static int holds(uintptr_t address, uint32_t pattern) {
    volatile uint32_t *word = (volatile uint32_t *)address;
    uint32_t saved = *word;
    *word = pattern;
    int kept = *word == pattern;
    *word = saved;
    return kept;
}

int main(void) {
    unsigned part = (unsigned)(CPUID >> 4) & 0xFFFu;
    unsigned mve = (unsigned)(MVFR1 >> 8) & 0xFu;
    int code_ram = holds(CODE_RAM_END, 0xA5A5F00Du);
    int data_ram = holds(DATA_RAM_END, 0x5A5A0FF0u);
    printf("part 0x%03x mve %u code ram %d data ram %d\n", part, mve, code_ram, data_ram);
    return code_ram && data_ram ? 0 : 1;
}
"""


@skip_without_peers
@skip_without_board
@pytest.mark.parametrize(("platform", "part", "mve", "code_ram", "data_ram"), [
    (CORTEX_M4, 0xC24, 0, 0x003FFFFC, 0x203FFFFC), (CORTEX_M7, 0xC27, 0, 0x003FFFFC, 0x203FFFFC),
    (CORTEX_M33, 0xD21, 0, 0x103FFFFC, 0x383FFFFC), (CORTEX_M55, 0xD22, 2, 0x0007FFFC, 0x213FFFFC)])
def test_the_board_is_the_core_and_has_the_linker_scripts_memory(platform: str, part: int, mve: int, code_ram: int,
                                                                 data_ram: int, tmp_path: Path) -> None:
    """QEMU's mps2-an500 is a Cortex-M7 (CPUID part 0xC27) whose SSRAM1 (0x0) and SSRAM2/3 (0x20000000) are 4 MiB
    each, as on the mps2-an386 (part 0xC24): the one linker script fits both (QEMU 7.2's ``info mtree`` agrees;
    the an500 lacks the an386's block RAM at 0x01000000 and PSRAM at 0x21000000, which the script does not use).
    The mps3-an547 is a Cortex-M55 (0xD22) with Helium and its floating point (MVFR1 = 2); its script's vector
    table goes to the 512 KiB ITCM and its data to the 4 MiB ISRAM at 0x21000000.  The mps2-an505 is a
    Cortex-M33 (0xD21) whose two 4 MiB SSRAMs the script reaches through their Secure aliases."""
    folder = compile_for(platform, PEERS["Models/MLPerf/KeywordSpotting"], tmp_path / "out")
    (folder / "probe.c").write_text(MEMORY_PROBE, encoding="utf-8")
    built = make_test(folder, "program", PROGRAM="probe.elf", PROGRAM_SRCS="probe.c",
                      CFLAGS=f"-O2 -DCODE_RAM_END=0x{code_ram:08X}u -DDATA_RAM_END=0x{data_ram:08X}u")
    assert built.returncode == 0, built.stdout + built.stderr
    emulator = re.search(r"^EMULATOR \?= (.*)$", (folder / "Makefile").read_text(encoding="utf-8"), re.M)
    assert emulator is not None
    run = subprocess.run([*emulator[1].split(), str(folder / "probe.elf")], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode == 0 and run.stdout.split() == ["part", f"0x{part:03x}", "mve", str(mve), "code", "ram",
                                                          "1", "data", "ram", "1"], run.stdout + run.stderr

