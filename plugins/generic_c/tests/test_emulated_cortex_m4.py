"""Deeploy's peer networks run on an emulated Cortex-M4 and pass their self-tests there (issue 29).

Each network is compiled with ``compile --inputs --outputs`` (Deeploy's golden
outputs as the self-test), its library built with the folder's own Makefile
for a Cortex-M4 with its FPU at ``-Os`` and at ``-O2``, linked with the
self-test against newlib with semihosting and run on QEMU's ``mps2-an386``
board (:mod:`deeploy_core.testing.emulated_targets`).  The self-test's
default verdict applies: integer outputs must match bit for bit, float outputs
within 1e-4 of the expected values' scale with a cosine of at least 0.9999.
Three of the networks (two integer, one float) also run tiled into a
16000-byte L1.  The cross build alone
(test_cross_compile.py) cannot show this: here ``int32_t`` is ``long``,
``double`` is software and the optimiser works for a 32-bit Thumb core, on the
code that actually runs.

The same folders' self-tests also run on rv32imc (QEMU's ``virt``, soft float,
picolibc) at ``-Os`` where Debian's RISC-V compiler, picolibc and
qemu-system-misc are installed.  The machinery (exit status, faults, FPU
before constructors, heap, timeouts, a caller's own ``main``) is checked on a
small float network that needs no ``../shared``.  CI
installs the compilers and QEMU (``.ci/run``); elsewhere the tests skip,
naming the Debian package.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest

from deeploy_core.testing.cli_outcomes import CliLab
from deeploy_core.testing.emulated_targets import (CORTEX_M4_MPS2, FAULT_STATUS, RV32IMC_VIRT, TIMEOUT_STATUS,
                                                    EmulatedTarget, build_program, main, run_program, run_self_test)
from deeploy_core.testing.models import conformance_model
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root

ROOT = peer_tests_root(Path(__file__).parent)
PEERS = {peer.name: peer for peer in find_peer_tests(ROOT)} if ROOT else {}
MISSING_PEERS = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"
NO_CORTEX_M4 = CORTEX_M4_MPS2.missing()
NO_RV32IMC = RV32IMC_VIRT.missing()
LEVELS = ("-Os", "-O2")
TILED_L1 = 16000

INTEGER = ("Models/miniMobileNet", "Models/MLPerf/KeywordSpotting", "Models/EEGFormer", "Models/Transformer_DeepQuant",
           "Kernels/Integer/Conv/Regular_2D_RQ", "Kernels/Integer/Conv/DW_2D_RQ", "Kernels/Integer/MatMul/Regular_RQ",
           "Kernels/Integer/GEMM/Regular", "Kernels/Integer/Softmax/Regular", "Kernels/Integer/ReduceMean",
           "Kernels/Mixed/Dequant", "Kernels/Mixed/Quant")
"""Quantised models and the (re)quantising kernels they are made of (int8 in, int32 accumulators)."""
FLOAT = ("Models/CCT/FP32/CCT_1_16_16_8", "Models/TinyViT/5M/Layers/FP32/ReduceMean", "Kernels/FP32/LayerNorm",
         "Kernels/FP32/Softmax/Regular", "Kernels/FP32/Conv/Regular_2D_Bias", "Kernels/FP32/Conv/DW_2D_Bias",
         "Kernels/FP32/GEMM/Regular", "Kernels/FP32/RMSNorm/separate_ops", "Kernels/FP32/Transpose",
         "Kernels/FP32/ReduceMean/KeepDims/Axes2_1")
"""Float models and kernels whose C code calls newlib's math (expf, sqrtf) or computes statistics in double."""
TILED = ("Models/miniMobileNet", "Models/MLPerf/KeywordSpotting", "Kernels/FP32/Conv/Regular_2D_Bias")
"""Tiled into ``TILED_L1`` bytes: the tile loops' copies and offsets run on the core too."""

CASES = [(name, None) for name in INTEGER + FLOAT] + [(name, TILED_L1) for name in TILED]


def _case_id(case: tuple[str, int | None]) -> str:
    name, l1 = case
    return name if l1 is None else f"{name}@L1={l1}"


def compile_folder(model: Path, inputs: Path, outputs: Path | None, output: Path, *options: str) -> Path:
    """``deeploy-core compile`` with a self-test judged by the default rule (integers exact, floats relative to
    the expected values' scale and by cosine), in-process; the folder it wrote."""
    lab = CliLab(output.parent / "runs", {"DEEPLOY_CORE_PLUGINS": "generic-c"})
    data = ["--inputs", str(inputs), *(["--outputs", str(outputs)] if outputs is not None else [])]
    outcome = lab.invoke(["compile", str(model), "-o", str(output), "--quiet", "--platform", "generic-c", *data,
                          *options])
    assert outcome.ok, outcome.describe()
    return output


def test_the_cases_cover_the_issue() -> None:
    """At least ten networks, integer and float, one tiled (issue 29); every name is a peer test."""
    assert len(CASES) >= 12 and set(TILED) & set(INTEGER) and set(TILED) & set(FLOAT)
    if ROOT is not None:
        assert {name for name, _ in CASES} <= set(PEERS), sorted({name for name, _ in CASES} - set(PEERS))


@pytest.fixture(scope="module")
def peer_folder(tmp_path_factory: pytest.TempPathFactory) -> Callable[[tuple[str, int | None]], Path]:
    """A case's output folder, compiled once for both targets (their builds live in separate build folders)."""
    folders: dict[tuple[str, int | None], Path] = {}

    def folder(case: tuple[str, int | None]) -> Path:
        if case not in folders:
            name, l1 = case
            peer: PeerTest = PEERS[name]
            options = ("--l1", str(l1)) if l1 is not None else ()
            output = tmp_path_factory.mktemp("emulated-peer") / "out"
            folders[case] = compile_folder(peer.model, peer.inputs, peer.outputs, output, *options)
        return folders[case]

    return folder


@pytest.mark.skipif(ROOT is None, reason=MISSING_PEERS)
@pytest.mark.skipif(NO_CORTEX_M4 is not None, reason=f"cannot run on an emulated Cortex-M4: {NO_CORTEX_M4}")
@pytest.mark.parametrize("case", CASES, ids=[_case_id(case) for case in CASES])
def test_peer_self_test_passes_on_the_emulated_cortex_m4(
        case: tuple[str, int | None], peer_folder: Callable[[tuple[str, int | None]], Path]) -> None:
    folder = peer_folder(case)
    for level in LEVELS:
        run = run_self_test(folder, CORTEX_M4_MPS2, optimisation=level, timeout=120)
        assert run.self_test_passed, f"{_case_id(case)} at {level}: {run.describe()}"


@pytest.mark.skipif(ROOT is None, reason=MISSING_PEERS)
@pytest.mark.skipif(NO_RV32IMC is not None, reason=f"cannot run on an emulated rv32imc: {NO_RV32IMC}")
@pytest.mark.parametrize("case", CASES, ids=[_case_id(case) for case in CASES])
def test_peer_self_test_passes_on_the_emulated_rv32imc(
        case: tuple[str, int | None], peer_folder: Callable[[tuple[str, int | None]], Path]) -> None:
    """No FPU: every float operation is a libgcc call, the math is picolibc's; -Os only (the firmware default)."""
    run = run_self_test(peer_folder(case), RV32IMC_VIRT, optimisation="-Os", timeout=120)
    assert run.self_test_passed, f"{_case_id(case)}: {run.describe()}"


# The machinery, on a small float network (Gemm, Relu, Gemm) that needs no ../shared.

@pytest.fixture(scope="module")
def mlp_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The conformance MLP with a self-test against ONNX Runtime (no --outputs)."""
    root = tmp_path_factory.mktemp("emulated-mlp")
    onnx.save(conformance_model("mlp"), root / "mlp.onnx")
    np.savez(root / "inputs.npz", x=np.linspace(-2.0, 2.0, 32, dtype=np.float32).reshape(2, 16))
    return compile_folder(root / "mlp.onnx", root / "inputs.npz", None, root / "out")


def _skip_without(target: EmulatedTarget) -> None:
    reason = target.missing()
    if reason is not None:
        pytest.skip(f"cannot run on an emulated {target.name}: {reason}")


OWN_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "Network.h"

static volatile float scale = 1.5f;
static float scaled;

/* Runs before main: the FPU must already be on, or this faults (exit status 70). */
__attribute__((constructor)) static void before_main(void) { scaled = scale * scale; }

int main(void) {
    unsigned char *copy = malloc(DeeployNetwork_outputs_bytes[0]);
    if (copy == NULL || scaled != 2.25f) return 1;
    InitNetwork();
    memset(DeeployNetwork_inputs[0], 0, DeeployNetwork_inputs_bytes[0]);
    RunNetwork();
    memcpy(copy, DeeployNetwork_outputs[0], DeeployNetwork_outputs_bytes[0]);
    for (uint32_t i = 0; i < DeeployNetwork_outputs_bytes[0]; ++i) printf("%02x", copy[i]);
    printf("\n");
    return 3;
}
"""


def test_the_documented_command_runs_the_self_test(mlp_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/generated-code.rst: ``python -m deeploy_core.testing.emulated_targets OUT -O2`` prints the program's
    output and exits with its status."""
    _skip_without(CORTEX_M4_MPS2)
    assert main([str(mlp_folder), "-O2"]) == 0
    printed = capsys.readouterr()
    assert "self-test passed" in printed.out.splitlines(), printed
    assert "cortex-m4 -O2 on qemu-system-arm: exit 0" in printed.err.splitlines(), printed
    assert main([str(mlp_folder.parent), "-O2"]) == 2
    assert "has no self-test" in capsys.readouterr().err


def test_a_callers_main_links_with_constructors_heap_and_its_exit_status(mlp_folder: Path, tmp_path: Path) -> None:
    """A main outside the folder (the differential builds print raw output bytes this way); ``exit(3)`` is
    QEMU's status 3."""
    _skip_without(CORTEX_M4_MPS2)
    main = tmp_path / "dump_main.c"
    main.write_text(OWN_MAIN, encoding="utf-8")
    elf = build_program(mlp_folder, CORTEX_M4_MPS2, optimisation="-O1", main_sources=[main], build_dir="build-dump")
    run = run_program(elf, CORTEX_M4_MPS2, timeout=60)
    assert run.exit_code == 3, run.describe()
    [line] = run.stdout.splitlines()
    assert len(line) == 2 * 2 * 4 * 4 and int(line, 16) > 0, run.describe()  # 2x4 float32 outputs, not all zero


def test_the_self_test_passes_at_O0_and_O3(mlp_folder: Path) -> None:
    _skip_without(CORTEX_M4_MPS2)
    for level in ("-O0", "-O3"):
        run = run_self_test(mlp_folder, CORTEX_M4_MPS2, optimisation=level, timeout=60)
        assert run.self_test_passed and "output 'y':" in run.stdout, run.describe()
    assert (mlp_folder / "build-cortex-m4-O0" / "program.elf").is_file()


OVERFLOW_MAIN = r"""
static int depth(int n) { volatile char pad[1024]; pad[0] = (char)n; return n == 0 ? pad[0] : depth(n - 1) + pad[0]; }
int main(void) { return depth(100) == 5050 ? 0 : 1; }
"""


@pytest.mark.parametrize(("source", "stack", "shown"), [
    ("int main(void) { return *(volatile int *)0x30000000; }\n", None, "BFAR 0x30000000"),
    (OVERFLOW_MAIN, 64 * 1024, "stack overflow"),
], ids=["bus-fault", "stack-overflow"])
def test_a_fault_ends_the_run_with_a_report(source: str, stack: int | None, shown: str, mlp_folder: Path,
                                             tmp_path: Path) -> None:
    """An access outside the board's memory, or 100 KiB of stack in a 64 KiB stack: status 70 and a report on
    the fault, no hang; a larger stack (a link flag) lets the same program finish."""
    _skip_without(CORTEX_M4_MPS2)
    main = tmp_path / "fault_main.c"
    main.write_text(source, encoding="utf-8")
    run = run_program(build_program(mlp_folder, CORTEX_M4_MPS2, main_sources=[main], build_dir="build-fault"),
                      CORTEX_M4_MPS2, timeout=60)
    assert run.exit_code == FAULT_STATUS and not run.timed_out, run.describe()
    assert shown in run.stdout + run.stderr, run.describe()
    if stack is not None:
        larger = build_program(mlp_folder, CORTEX_M4_MPS2, main_sources=[main], build_dir="build-fault",
                               extra_ldflags=[f"-Wl,--defsym=__dc_stack_size={4 * stack}"])
        assert run_program(larger, CORTEX_M4_MPS2, timeout=60).exit_code == 0


def test_a_program_that_never_ends_is_stopped(mlp_folder: Path, tmp_path: Path) -> None:
    _skip_without(CORTEX_M4_MPS2)
    main = tmp_path / "spin_main.c"
    main.write_text("int main(void) { for (;;) { __asm__ volatile(\"\"); } }\n", encoding="utf-8")
    run = run_program(build_program(mlp_folder, CORTEX_M4_MPS2, main_sources=[main], build_dir="build-spin"),
                      CORTEX_M4_MPS2, timeout=1.0)
    assert run.timed_out and run.exit_code == TIMEOUT_STATUS, run.describe()


def test_the_self_test_passes_on_rv32imc(mlp_folder: Path) -> None:
    """Soft-float rv32imc with picolibc: the same self-test, through picolibc's semihosting."""
    _skip_without(RV32IMC_VIRT)
    run = run_self_test(mlp_folder, RV32IMC_VIRT, optimisation="-Os", timeout=60)
    assert run.self_test_passed and run.stderr == "", run.describe()


def test_a_missing_emulator_names_its_debian_package() -> None:
    from dataclasses import replace

    absent = replace(CORTEX_M4_MPS2, emulator="qemu-system-absent-for-test")
    if CORTEX_M4_MPS2.cross.missing() is None:
        assert absent.missing() == "qemu-system-absent-for-test not found (install Debian's qemu-system-arm)"
    without_compiler = replace(RV32IMC_VIRT, cross=replace(RV32IMC_VIRT.cross, tool_prefix="absent-for-test-"))
    reason = without_compiler.missing()
    assert reason is not None and "gcc-riscv64-unknown-elf" in reason
