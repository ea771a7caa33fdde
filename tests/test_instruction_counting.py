"""The Cortex-M4 instruction counter (issue 35's measuring instrument): exact counts, per layer, like QEMU's run.

Exactness is shown on a hand-written assembly region whose instruction count is
known (the compiler cannot change it), at two loop lengths so that a wrong
per-iteration count fails, with an IT block whose condition always fails (Arm
counts such an instruction as executed; Unicorn's per-instruction hook does not
even see it, which is why the counter works per block).  A real network (a
Deeploy peer) then runs its self-test under the counter and under QEMU: same
text, same status, one count per layer, layers summing to the inference,
identical counts on a second run.  The counter that reads QEMU's own execution
trace (for cores Unicorn cannot run) must give the region's exact counts too,
and the same per-layer counts as Unicorn on the network.  Needs arm-none-eabi-gcc with newlib and
qemu-system-arm (as the emulated tests) and unicorn, capstone and pyelftools
(the test extra); skips naming what is missing.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest

from deeploy_core.testing.cli_outcomes import CliLab
from deeploy_core.emulation.cortex_m4_timing import REFILL_CYCLES
from deeploy_core.testing.emulated_targets import (CORTEX_M4_MPS2, PACKAGE_FILES, PASSED_LINE, SELF_TEST_MAINS,
                                                    build_program, run_program)
from deeploy_core.emulation.instruction_counting import CountingError, count_instructions, main, missing
from deeploy_core.emulation.qemu_trace_counting import TraceCountingError, count_from_qemu_trace, tally_trace
from deeploy_core.testing.models import conformance_model
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

NO_COUNTER = missing()
NO_CORTEX_M4 = CORTEX_M4_MPS2.missing()
ROOT = peer_tests_root(Path(__file__).parent)
PEER = "Models/MLPerf/KeywordSpotting"
PROFILE_MARK_SOURCE = PACKAGE_FILES / "dc_profile_mark.c"

needs_counter = pytest.mark.skipif(NO_COUNTER is not None, reason=f"cannot count instructions: {NO_COUNTER}")
needs_cortex_m4 = pytest.mark.skipif(NO_CORTEX_M4 is not None,
                                     reason=f"cannot build for an emulated Cortex-M4: {NO_CORTEX_M4}")

REGION = r"""
    .syntax unified
    .thumb
    .text
    .global dc_counted_loop
    .type dc_counted_loop, %function
    .thumb_func
dc_counted_loop:            @ r0 = n >= 1 iterations: 1 + 6 n + 1 instructions
    movs r1, #0
1:  adds r1, r1, #1
    cmp r0, r0
    it ne
    addne r2, r2, #1        @ condition always fails: executed (and counted) all the same
    subs r0, r0, #1
    bne 1b
    bx lr
    .size dc_counted_loop, . - dc_counted_loop

    .global dc_counted_region
    .type dc_counted_region, %function
    .thumb_func
dc_counted_region:          @ mark 0, loop(r0), mark 1, loop(r1), mark 2
    push {r4, r5, lr}
    mov r4, r0
    mov r5, r1
    movs r0, #0
    bl DeeployNetwork_profile_mark
    mov r0, r4              @ layer 0: mov, bl, the loop, movs, bl = 6 n + 6
    bl dc_counted_loop
    movs r0, #1
    bl DeeployNetwork_profile_mark
    mov r0, r5              @ layer 1: the same with the second n
    bl dc_counted_loop
    movs r0, #2
    bl DeeployNetwork_profile_mark
    pop {r4, r5, pc}
    .size dc_counted_region, . - dc_counted_region
"""

REGION_MAIN = r"""
#include <stdint.h>
#include <stdio.h>
void dc_counted_region(uint32_t first, uint32_t second);
int main(void) {
    dc_counted_region(FIRST, SECOND);
    printf("counted\n");
    return 3;
}
"""


def compile_folder(model: Path, inputs: Path, outputs: Path | None, output: Path) -> Path:
    """``deeploy-core compile --platform generic-c`` with a self-test, in-process; the folder it wrote."""
    lab = CliLab(output.parent / "runs", {"DEEPLOY_CORE_PLUGINS": "generic-c"})
    data = ["--inputs", str(inputs), *(["--outputs", str(outputs)] if outputs is not None else [])]
    outcome = lab.invoke(["compile", str(model), "-o", str(output), "--quiet", "--platform", "generic-c", *data])
    assert outcome.ok, outcome.describe()
    return output


@pytest.fixture(scope="module")
def mlp_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small float network: the folder the hand-written region links against (its library goes unused)."""
    root = tmp_path_factory.mktemp("counted-mlp")
    onnx.save(conformance_model("mlp"), root / "mlp.onnx")
    np.savez(root / "inputs.npz", x=np.linspace(-2.0, 2.0, 32, dtype=np.float32).reshape(2, 16))
    return compile_folder(root / "mlp.onnx", root / "inputs.npz", None, root / "out")


def region_program(folder: Path, scratch: Path, first: int, second: int) -> Path:
    """The region with loops of ``first`` and ``second`` iterations, linked for mps2-an386."""
    (scratch / "region.S").write_text(REGION, encoding="utf-8")
    (scratch / "main.c").write_text(REGION_MAIN.replace("FIRST", f"{first}u").replace("SECOND", f"{second}u"),
                                    encoding="utf-8")
    return build_program(folder, CORTEX_M4_MPS2, main_sources=[scratch / "main.c", scratch / "region.S",
                                                               PROFILE_MARK_SOURCE], build_dir=f"build-{first}-{second}")


@needs_counter
@needs_cortex_m4
@pytest.mark.parametrize(("first", "second"), [(10, 1000), (3, 77)])
def test_a_known_region_is_counted_exactly(first: int, second: int, mlp_folder: Path, tmp_path: Path) -> None:
    """Layer k is 6 n + 6 instructions (the mark function's own excluded); its estimate is 8 n + 10 cycles:
    ``bne`` and the two ``bl`` and the ``bx lr`` taken (1 + P each) and the last ``bne`` not (1)."""
    profile = count_instructions(region_program(mlp_folder, tmp_path, first, second))
    assert (profile.exit_status, profile.stdout) == (3, "counted\n")
    assert [layer.instructions for layer in profile.layers] == [6 * first + 6, 6 * second + 6]
    assert REFILL_CYCLES == 2 and [layer.cycles for layer in profile.layers] == [8 * first + 10, 8 * second + 10]
    assert profile.inferences == 1 and profile.inference_instructions == 6 * (first + second) + 12
    loop = {function.name: function.instructions for function in profile.functions}["dc_counted_loop"]
    assert loop == 6 * (first + second) + 4
    assert profile.instructions == sum(function.instructions for function in profile.functions)


@needs_counter
@needs_cortex_m4
def test_the_command_prints_totals_layers_and_functions(mlp_folder: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m deeploy_core.emulation.instruction_counting ELF`` exits with the program's status."""
    assert main([str(region_program(mlp_folder, tmp_path, 10, 1000)), "--top", "2"]) == 3
    printed = capsys.readouterr().out
    assert printed.startswith("counted\nexit status 3: ") and "  layer   1:        6,006 instructions" in printed
    assert "dc_counted_loop" in printed, printed


@needs_counter
@needs_cortex_m4
def test_a_fault_raises_and_a_program_that_never_ends_is_stopped(mlp_folder: Path, tmp_path: Path) -> None:
    """An access outside the board's memory is an error naming the pc (QEMU would run the fault handler); a
    spinning program stops after its budget with no exit status."""
    programs = {}
    for name, body in (("fault", "return *(volatile int *)0x30000000;"), ("spin", "for (;;) __asm__ volatile(\"\");")):
        (tmp_path / f"{name}.c").write_text(f"int main(void) {{ {body} }}\n", encoding="utf-8")
        programs[name] = build_program(mlp_folder, CORTEX_M4_MPS2, main_sources=[tmp_path / f"{name}.c"],
                                       build_dir=f"build-{name}")
    with pytest.raises(CountingError, match="at pc 0x"):
        count_instructions(programs["fault"])
    stopped = count_instructions(programs["spin"], timeout_instructions=100_000)
    assert stopped.exit_status is None and 100_000 < stopped.instructions < 100_100


def test_a_missing_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "elftools" else real(name))
    reason = missing()
    assert reason is not None and "pyelftools" in reason and "\n" not in reason
    with pytest.raises(ImportError, match="pyelftools"):
        count_instructions(Path("absent.elf"))


def counted_peer(tmp_path: Path) -> tuple[Path, Path]:
    """The peer network's folder and its self-test ELF built for mps2-an386 with the profile marks."""
    assert ROOT is not None
    peer = {peer.name: peer for peer in find_peer_tests(ROOT)}[PEER]
    folder = compile_folder(peer.model, peer.inputs, peer.outputs, tmp_path / "out")
    elf = build_program(folder, CORTEX_M4_MPS2, extra_cflags=["-DDC_PROFILE"],
                        main_sources=[*SELF_TEST_MAINS, PROFILE_MARK_SOURCE], build_dir="build-counted")
    return folder, elf


@needs_counter
@needs_cortex_m4
@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
def test_a_peer_network_counts_per_layer_and_prints_what_qemu_prints(tmp_path: Path) -> None:
    folder, elf = counted_peer(tmp_path)
    qemu = run_program(elf, CORTEX_M4_MPS2, timeout=120)
    profile = count_instructions(elf)
    assert qemu.self_test_passed, qemu.describe()
    assert (profile.exit_status, profile.stdout, profile.stderr) == (0, qemu.stdout, qemu.stderr)
    assert PASSED_LINE in profile.stdout.splitlines()
    declared = re.search(r"#define DEEPLOY_NETWORK_NUM_LAYERS (\d+)", (folder / "Network.h").read_text("utf-8"))
    assert declared is not None and len(profile.layers) == int(declared.group(1))
    assert profile.inferences == 1
    assert sum(layer.instructions for layer in profile.layers) == profile.inference_instructions
    assert sum(layer.cycles for layer in profile.layers) == profile.inference_cycles
    assert 0 < profile.inference_instructions < profile.instructions <= profile.cycles
    assert all(layer.instructions <= layer.cycles for layer in profile.layers)
    again = count_instructions(elf)
    assert (again.instructions, again.cycles, again.layers, again.functions) == \
        (profile.instructions, profile.cycles, profile.layers, profile.functions)


QEMU_M4 = ("qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting-config", "enable=on,target=native",
           "-kernel")
"""The mps2-an386 run as the MPS2 boards' ``BoardSupport.emulator`` states it (the ELF appended)."""


@needs_cortex_m4
@pytest.mark.parametrize(("first", "second"), [(10, 1000), (3, 77)])
def test_qemu_s_trace_counts_the_known_region_exactly(first: int, second: int, mlp_folder: Path,
                                                      tmp_path: Path) -> None:
    """The trace counter (cores Unicorn cannot run: the Cortex-M55) on the same region: 6 n + 6 per layer, the
    failing IT instruction included, marks read from their order (0, 1, 2 for two layers); no cycles."""
    profile = count_from_qemu_trace(QEMU_M4, region_program(mlp_folder, tmp_path, first, second), 2)
    assert (profile.exit_status, profile.stdout) == (3, "counted\n")
    assert [layer.instructions for layer in profile.layers] == [6 * first + 6, 6 * second + 6]
    assert profile.inferences == 1 and profile.inference_instructions == 6 * (first + second) + 12
    assert profile.cycles == 0 and all(layer.cycles == 0 for layer in profile.layers)
    loop = {function.name: function.instructions for function in profile.functions}["dc_counted_loop"]
    assert loop == 6 * (first + second) + 4


@needs_counter
@needs_cortex_m4
@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
def test_qemu_s_trace_and_unicorn_count_a_network_the_same(tmp_path: Path) -> None:
    """Two independent instruments, one program: every layer and the inference agree to the instruction."""
    folder, elf = counted_peer(tmp_path)
    declared = re.search(r"#define DEEPLOY_NETWORK_NUM_LAYERS (\d+)", (folder / "Network.h").read_text("utf-8"))
    assert declared is not None
    traced = count_from_qemu_trace(QEMU_M4, elf, int(declared.group(1)))
    unicorn = count_instructions(elf)
    assert (traced.exit_status, traced.stdout) == (0, unicorn.stdout) and PASSED_LINE in traced.stdout.splitlines()
    assert [layer.instructions for layer in traced.layers] == [layer.instructions for layer in unicorn.layers]
    assert traced.inference_instructions == unicorn.inference_instructions > 0 and traced.inferences == 1


def test_a_trace_is_read_by_translation_and_a_block_never_translated_is_refused() -> None:
    """A block counts as its translation in the trace; one run under other flags with no translation logged
    counts as its pc's latest.  The second entry into the mark is mark 1."""
    trace = ["----------------", "IN: main", "0x00000100:  2000       movs r0, #0", "0x00000102:  f000 f801  bl #0x108",
             "", "Trace 0: 0x7f00 [00000000/00000100/00000001/ff000200] main",
             "----------------", "IN: DeeployNetwork_profile_mark", "0x00000108:  4770       bx lr", "",
             "Trace 0: 0x7f40 [00000000/00000108/00000001/ff000200] DeeployNetwork_profile_mark",
             "Trace 0: 0x7f00 [00000000/00000100/00000001/ff000200] main",
             "Trace 0: 0x7f40 [00000000/00000108/00000001/ff000200] DeeployNetwork_profile_mark",
             "Trace 0: 0x7f80 [00000000/00000100/00000003/ff000200] main"]
    blocks, events = tally_trace(trace, "DeeployNetwork_profile_mark", 1)
    assert sorted((block.function, block.instructions, block.hits) for block in blocks) == [
        ("DeeployNetwork_profile_mark", 1, 2), ("main", 2, 3)]
    assert events == [(0, 2, 0), (1, 4, 0)]
    with pytest.raises(TraceCountingError, match="0x200"):
        tally_trace(["Trace 0: 0x7f00 [00000000/00000200/00000001/ff000200] main"], "mark", 1)
    with pytest.raises(TraceCountingError, match="needs a qemu-system-\\* emulator"):
        count_from_qemu_trace(("renode", "--console"), Path("absent.elf"), 1)
