"""Instructions, estimated cycles, flash and RAM of networks on a Cortex-M4: the cortex-m4 platform (CMSIS-NN)
against generic C built for the same core.

Usage::

    python bench/cortex_m.py [--networks resnet8,dscnn,...] [--markdown] [--no-check]

Each network is compiled twice with ``--quantization fixed-point`` (TFLite's
arithmetic, which CMSIS-NN computes): for ``generic-c`` and for
``cortex-m4``, each with a self-test (one seeded input, the expected outputs
from LiteRT on the ``.tflite`` for the MLPerf Tiny networks, Deeploy's golden
outputs for the peers).  Both folders are built with their own Makefiles at
``-O2`` (``--optimisation``) for a Cortex-M4F with ``-DDC_PROFILE`` and linked with the self-test
and the start-up code of QEMU's ``mps2-an386``.  The ELF then runs under the
instruction counter (:mod:`deeploy_core.emulation.instruction_counting`: Unicorn,
every executed instruction counted once, cycles estimated with the documented
Cortex-M4 timing table), which also checks that the self-test passed.

Columns: instructions of one inference on each platform and their ratio; the
estimated cycles on each and their ratio; the share of cortex-m4's instructions spent
outside CMSIS-NN's functions (``arm_*``: everything that is not the kernels —
layer glue, generic-C fallback layers, copies); flash (code + read-only data +
initialised data) and RAM (initialised + zero-initialised data, the arena
included) of what a ``--gc-sections`` firmware link keeps of ``libnetwork.a``;
the arena from report.json.  A second table lists the kept sections by kind
(text, rodata, data, bss) for each platform.

A third table does the same count on the Cortex-M33 (QEMU's ``mps2-an505``,
CMSIS-NN's DSP kernels as on the M4, Armv8-M code) and the Cortex-M55
(``mps3-an547``, CMSIS-NN's Helium kernels): each Cortex-M platform against
generic C built for the same core (for the M55, ``-mcpu=cortex-m55`` lets GCC
vectorise generic C for Helium too).  Unicorn cannot run Helium and knows
only the MPS2 map of the M4, so these counts come from QEMU's own execution
trace (:mod:`deeploy_core.emulation.qemu_trace_counting`, which agrees with
Unicorn to the instruction on M4 programs); there is no timing model for
these cores, hence no cycles.  ``--no-other-cores`` leaves the table out.

Targets (issue 35), on the four MLPerf Tiny int8 networks: at most half of
generic C's instructions, and at most 10 % of the total outside CMSIS-NN.
The exit status is 1 when a target is missed (``--no-check``: always 0 unless
a build or a self-test failed).

The MLPerf Tiny networks come from ``make quant``'s exporters (Keras ->
TFLiteConverter int8 -> ``tf2onnx --tflite``, cached); CMSIS-NN from
``CMSIS_NN_PATH`` or ``../shared/third-party/cmsis-nn``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.linked_size import linked_sizes  # noqa: E402
from bench.run_speed import print_table  # noqa: E402
from deeploy_core.api import CompileOptions, compile_model  # noqa: E402
from deeploy_core.plugins import PluginHost  # noqa: E402
from deeploy_core.testing.emulated_targets import CORTEX_M4_MPS2, SELF_TEST_MAINS, build_program  # noqa: E402
from deeploy_core.emulation.instruction_counting import count_instructions, missing  # noqa: E402
from deeploy_core.emulation.instruction_profile import InstructionProfile  # noqa: E402
from deeploy_core.emulation.qemu_trace_counting import count_from_qemu_trace  # noqa: E402
from deeploy_core.testing.emulated_targets import EmulatedTarget  # noqa: E402
from deeploy_cortex_m.board import arm_board  # noqa: E402
from deeploy_cortex_m.cores import CORES  # noqa: E402
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root  # noqa: E402
from deeploy_core.testing.section_sizes import SectionSizes  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MARK_SOURCE = ROOT / "deeploy_core" / "testing" / "emulated" / "dc_profile_mark.c"
MLPERF_TINY = ("resnet8", "dscnn", "mobilenet_v1_025", "fc_autoencoder")
PEERS = ("Models/MLPerf/KeywordSpotting", "Models/miniMobileNet")
OTHER_CORES = ("cortex-m33", "cortex-m55")
"""The cores counted from QEMU's trace: the platform of the same name against generic C on each."""


def _traced_target(core: str) -> EmulatedTarget:
    """The plugin's board for ``core`` (flags, linker script, QEMU machine), as the core's build helper takes it."""
    board = arm_board(CORES[core])
    assert board.linker_script is not None and board.emulator[-1] == "-kernel"
    return EmulatedTarget(
        name=core, cross=CORTEX_M4_MPS2.cross, arch_flags=board.arch_flags,
        link_flags=(*board.link_flags, "-T", str(board.linker_script)),
        startup_sources=CORTEX_M4_MPS2.startup_sources, emulator=board.emulator[0],
        emulator_args=board.emulator[1:-1], emulator_package=CORTEX_M4_MPS2.emulator_package)
RATIO_TARGET = 0.5
OVERHEAD_TARGET = 0.10
SEED = 0


@dataclass(frozen=True)
class Case:
    """A network with one input sample and its expected outputs (written as .npz for ``compile``)."""

    name: str
    model: Path
    inputs: Path
    outputs: Path
    mlperf: bool


@dataclass(frozen=True)
class Measured:
    """One platform's figures for one network."""

    instructions: int
    cycles: int
    outside_cmsis: int
    sizes: SectionSizes
    """What a ``--gc-sections`` link keeps of ``libnetwork.a``, by kind (``arm-none-eabi-size -A``)."""
    arena: int

    @property
    def flash(self) -> int:
        return self.sizes.text + self.sizes.rodata + self.sizes.data

    @property
    def ram(self) -> int:
        return self.sizes.data + self.sizes.bss


def _cmsis_root() -> str:
    root = os.environ.get("CMSIS_NN_PATH") or str(ROOT.parent / "shared" / "third-party" / "cmsis-nn")
    if not (Path(root) / "Include" / "arm_nnfunctions.h").is_file():
        raise SystemExit(f"CMSIS-NN not found at {root}: set CMSIS_NN_PATH")
    return root


def _mlperf_case(name: str, host: PluginHost, scratch: Path) -> Case:
    """The converted network, a seeded int8 input and LiteRT's outputs on the .tflite for it."""
    from deeploy_core.testing.quant_checks import litert_reference, random_samples
    from deeploy_core.testing.tflite_export import converted

    files = converted(name)
    _, generated = compile_model(files.int8_onnx, CompileOptions(platform="generic-c", quantization="fixed-point"),
                                 host)
    sample = random_samples(generated, count=1, seed=SEED)[0]
    expected = litert_reference(files.int8_tflite, generated)(sample)
    inputs, outputs = scratch / f"{name}-inputs.npz", scratch / f"{name}-outputs.npz"
    np.savez(inputs, **sample)
    np.savez(outputs, **{spec.name: value for spec, value in zip(generated.outputs, expected)})
    return Case(name, files.int8_onnx, inputs, outputs, mlperf=True)


def _peer_cases(names: list[str]) -> list[Case]:
    root = peer_tests_root(ROOT / "tests")
    if root is None:
        return []
    peers = {peer.name: peer for peer in find_peer_tests(root)}
    return [Case(Path(name).name, peers[name].model, peers[name].inputs, peers[name].outputs, mlperf=False)
            for name in names if name in peers]


def _compile(case: Case, platform: str, folder: Path) -> None:
    """``deeploy-core compile`` as a user runs it, with the self-test."""
    command = [sys.executable, "-m", "deeploy_core", "compile", str(case.model), "-o", str(folder), "--quiet",
               "--platform", platform, "--quantization", "fixed-point", "--inputs", str(case.inputs),
               "--outputs", str(case.outputs)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"compile {case.name} for {platform}: {(result.stderr or result.stdout).strip()[:800]}")


def _profile_build(case: Case, platform: str, target: EmulatedTarget, folder: Path, optimisation: str) -> Path:
    """``case`` compiled for ``platform`` with its self-test into ``folder`` and built for ``target`` with the
    profile marks; the ELF."""
    _compile(case, platform, folder)
    return build_program(folder, target, optimisation=optimisation, extra_cflags=("-DDC_PROFILE",),
                         main_sources=(*SELF_TEST_MAINS, MARK_SOURCE), build_dir=f"build-{target.name}{optimisation}")


def _outside_cmsis_nn(case: Case, platform: str, profile: InstructionProfile) -> int:
    """The instructions of one inference outside CMSIS-NN's ``arm_*`` functions, once the self-test passed."""
    if profile.exit_status != 0 or "self-test passed" not in profile.stdout:
        raise RuntimeError(f"{case.name} on {platform}: self-test failed (exit {profile.exit_status}): "
                           + profile.stdout.strip()[-1500:])
    inside = sum(function.instructions for function in profile.functions if function.name.startswith("arm_"))
    return profile.inference_instructions - inside


def _measure(case: Case, platform: str, scratch: Path, optimisation: str = "-O2") -> Measured:
    """Compile with the self-test, build for the M4 with the profile marks, count one run, measure the library."""
    folder = scratch / f"{case.name}-{platform}"
    elf = _profile_build(case, platform, CORTEX_M4_MPS2, folder, optimisation)
    profile = count_instructions(elf)
    outside = _outside_cmsis_nn(case, platform, profile)
    members = {path.with_suffix(".o").name for path in folder.glob("*.c")}
    sizes = linked_sizes(elf.parent / "libnetwork.a", members, "arm-none-eabi-").total
    arena = int(json.loads((folder / "report.json").read_text(encoding="utf-8"))["memory"]["arena_bytes"])
    return Measured(profile.inference_instructions, profile.inference_cycles, outside, sizes, arena)


def _measure_traced(case: Case, platform: str, core: str, scratch: Path,
                    optimisation: str = "-O2") -> tuple[int, int]:
    """Instructions of one inference on ``core`` and those outside CMSIS-NN, from QEMU's trace."""
    folder = scratch / f"{case.name}-{platform}-{core}"
    target = _traced_target(core)
    elf = _profile_build(case, platform, target, folder, optimisation)
    layers = len(json.loads((folder / "report.json").read_text(encoding="utf-8"))["layers"])
    profile = count_from_qemu_trace((target.emulator, *target.emulator_args, "-kernel"), elf, layers)
    return profile.inference_instructions, _outside_cmsis_nn(case, f"{platform} ({core})", profile)


CORE_HEADER = ["network", "core", "generic-c instr", "cortex-m instr", "ratio", "outside CMSIS-NN"]
"""The third table: generic C and the core's platform on the same core, counted from QEMU's trace."""


HEADER = ["network", "generic-c instr", "cortex-m4 instr", "ratio", "target", "est. cycles gc/cm4", "cycle ratio",
          "outside CMSIS-NN", "target", "flash gc/cm4", "RAM gc/cm4", "arena gc/cm4"]


def _row(case: Case, generic: Measured, cortex: Measured) -> tuple[list[str], list[str]]:
    """The table row and the missed targets (MLPerf Tiny networks only)."""
    ratio = cortex.instructions / generic.instructions
    outside = cortex.outside_cmsis / cortex.instructions
    missed = []
    ratio_target = outside_target = "-"
    if case.mlperf:
        ratio_target = "met" if ratio <= RATIO_TARGET else "MISSED"
        outside_target = "met" if outside <= OVERHEAD_TARGET else "MISSED"
        if ratio > RATIO_TARGET:
            missed.append(f"{case.name}: ratio {ratio:.3f} > {RATIO_TARGET}")
        if outside > OVERHEAD_TARGET:
            missed.append(f"{case.name}: {outside:.1%} outside CMSIS-NN > {OVERHEAD_TARGET:.0%}")
    row = [case.name, f"{generic.instructions:,}", f"{cortex.instructions:,}", f"{ratio:.3f}", ratio_target,
           f"{generic.cycles:,} / {cortex.cycles:,}", f"{cortex.cycles / generic.cycles:.3f}", f"{outside:.1%}",
           outside_target, f"{generic.flash:,} / {cortex.flash:,}",
           f"{generic.ram:,} / {cortex.ram:,}", f"{generic.arena:,} / {cortex.arena:,}"]
    return row, missed


SIZE_HEADER = ["network", "platform", "text", "rodata", "data", "bss", "flash", "RAM", "arena"]
"""The second table: the library's sections as ``arm-none-eabi-size -A`` reads them, per platform."""


def _size_rows(case: Case, measured: dict[str, Measured]) -> list[list[str]]:
    return [[case.name, platform, f"{m.sizes.text:,}", f"{m.sizes.rodata:,}", f"{m.sizes.data:,}", f"{m.sizes.bss:,}",
             f"{m.flash:,}", f"{m.ram:,}", f"{m.arena:,}"] for platform, m in measured.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--networks", default=",".join((*MLPERF_TINY, *PEERS)),
                        help="comma-separated MLPerf Tiny names and peer paths")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--optimisation", default="-O2", help="the level both platforms are built at (default -O2)")
    parser.add_argument("--no-check", action="store_true", help="exit 0 when a target is missed")
    parser.add_argument("--no-other-cores", action="store_true", help="leave out the Cortex-M33/M55 table")
    args = parser.parse_args(argv)
    reason = missing() or CORTEX_M4_MPS2.missing()
    if reason:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    os.environ["CMSIS_NN_PATH"] = _cmsis_root()
    names = [name for name in args.networks.split(",") if name]
    rows: list[list[str]] = []
    size_rows: list[list[str]] = []
    core_rows: list[list[str]] = []
    missed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cortex_m_bench_") as scratch_name:
        scratch = Path(scratch_name)
        host = PluginHost.discover()
        cases = [_mlperf_case(name, host, scratch) for name in names if name in MLPERF_TINY]
        cases += _peer_cases([name for name in names if name not in MLPERF_TINY])
        for case in cases:
            generic = _measure(case, "generic-c", scratch, args.optimisation)
            cortex = _measure(case, "cortex-m4", scratch, args.optimisation)
            row, row_missed = _row(case, generic, cortex)
            rows.append(row)
            size_rows += _size_rows(case, {"generic-c": generic, "cortex-m4": cortex})
            missed += row_missed
            print(" ".join(row), file=sys.stderr, flush=True)
            for core in () if args.no_other_cores else OTHER_CORES:
                portable, _ = _measure_traced(case, "generic-c", core, scratch, args.optimisation)
                kernels, outside = _measure_traced(case, core, core, scratch, args.optimisation)
                core_rows.append([case.name, core, f"{portable:,}", f"{kernels:,}",
                                  f"{kernels / portable:.3f}", f"{outside / kernels:.1%}"])
                print(" ".join(core_rows[-1]), file=sys.stderr, flush=True)
    print_table(HEADER, rows, args.markdown)
    print()
    print_table(SIZE_HEADER, size_rows, args.markdown)
    if core_rows:
        print()
        print_table(CORE_HEADER, core_rows, args.markdown)
    for line in missed:
        print(f"MISSED {line}", file=sys.stderr)
    return 1 if missed and not args.no_check else 0


if __name__ == "__main__":
    raise SystemExit(main())
