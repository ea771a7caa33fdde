"""Instructions (exact) and cycles (estimated) of a Cortex-M4 program, per layer, per function and in all.

QEMU runs a program fast but says nothing about how much work it did; a
Cortex-M platform plugin needs to see what each layer costs on the core and
how much of it is spent in, say, CMSIS-NN's ``arm_*`` kernels.  This module
runs an ELF that :func:`~deeploy_core.testing.emulated_targets.build_program`
linked for ``mps2-an386`` under the Unicorn engine instead (a Cortex-M4 with
its FPU, the board's two 4 MiB RAMs and the System Control Space as plain
memory), answers its semihosting calls (:mod:`.arm_semihosting`) and counts
every executed instruction exactly once.

Counting: a block hook fires once per executed translation block; each block
is disassembled once with capstone (by address and size) into its number of
instructions and their cycles (:mod:`.cortex_m4_timing`).  Instructions in an
IT block whose condition fails are counted, as the architecture counts them
(they are part of the block).  A branch was taken when the next block does not
start where the previous one ends; that adds the refill to the estimate.

Layers: a network built with ``-DDC_PROFILE`` calls the profile mark (found by
its symbol, ``DeeployNetwork_profile_mark`` unless renamed) with k in r0
before layer k and with k = the layer count after the last.  Layer k gets the
instructions executed between entering mark k and entering mark k + 1,
*outside* the mark function: the mark's own instructions belong to no layer,
while the call to mark k + 1 (setting r0, the ``BL``) is the tail of layer k.
Several inferences add up per layer (:attr:`InstructionProfile.inferences`).
"""

from __future__ import annotations

import bisect
import struct
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deeploy_core.emulation import cortex_m4_timing
from deeploy_core.emulation.arm_semihosting import SemihostingError, SemihostingHost
from deeploy_core.emulation.instruction_profile import BlockTally, InstructionProfile, summarise

PROFILE_MARK = "DeeployNetwork_profile_mark"
"""The symbol of the function a ``-DDC_PROFILE`` build calls between layers (``emulated/dc_profile_mark.c``)."""

MEMORY = ((0x00000000, 4 << 20), (0x20000000, 4 << 20), (0xE000E000, 4 << 10))
"""(base, size): code RAM, data RAM (mps2_an386.ld) and the System Control Space (the start-up sets CPACR)."""

REQUIRED = (("unicorn", "unicorn"), ("capstone", "capstone"), ("elftools", "pyelftools"))
"""(module, PyPI package) the counter imports when it runs (the test extra installs them)."""


class CountingError(Exception):
    """The program could not be run to its end (a fault, an unknown instruction or semihosting call)."""


def missing() -> str | None:
    """Why the counter cannot run here (a one-line message naming the package to install), or None."""
    import importlib.util

    absent = [package for module, package in REQUIRED if importlib.util.find_spec(module) is None]
    return f"instruction counting needs {', '.join(absent)} (pip install {' '.join(absent)})" if absent else None


@dataclass(frozen=True)
class _Symbols:
    starts: list[int]
    ends: list[int]
    names: list[str]
    mark: tuple[int, int] | None

    def function(self, address: int) -> str:
        index = bisect.bisect_right(self.starts, address) - 1
        return self.names[index] if index >= 0 and address < self.ends[index] else f"<0x{address:x}>"


def _load(elf: Path, uc: Any, mark_symbol: str) -> _Symbols:
    """Copy the loadable segments to their load addresses (the start-up copies .data itself); read the symbols."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    functions: dict[int, tuple[int, str]] = {}
    with elf.open("rb") as stream:
        image = ELFFile(stream)
        for segment in image.iter_segments():
            if segment["p_type"] == "PT_LOAD" and segment["p_filesz"]:
                uc.mem_write(segment["p_paddr"], segment.data())
        for section in image.iter_sections():
            if isinstance(section, SymbolTableSection):
                for symbol in section.iter_symbols():
                    if symbol["st_info"]["type"] == "STT_FUNC" and symbol["st_size"] and symbol.name:
                        functions[symbol["st_value"] & ~1] = (symbol["st_size"], symbol.name)
    ordered = sorted(functions.items())
    marks = [(start, start + size) for start, (size, name) in ordered if name == mark_symbol]
    return _Symbols([start for start, _ in ordered], [start + size for start, (size, _) in ordered],
                    [name for _, (_, name) in ordered], marks[0] if marks else None)


def count_instructions(elf: Path, *, timeout_instructions: int = 1_000_000_000,
                       mark_symbol: str = PROFILE_MARK) -> InstructionProfile:
    """Run ``elf`` (linked for mps2-an386) from its reset vector to its exit and count what it executes.

    ``timeout_instructions`` stops a program that does not finish (checked per
    block, so the run may overshoot by one block); its profile then has
    ``exit_status`` None.  Raises :class:`CountingError` when the emulation
    faults, and ImportError naming the package when unicorn, capstone or
    pyelftools is missing.
    """
    reason = missing()
    if reason is not None:
        raise ImportError(reason)
    import capstone
    from unicorn import UC_ARCH_ARM, UC_HOOK_BLOCK, UC_HOOK_INTR, UC_MODE_MCLASS, UC_MODE_THUMB, Uc, UcError
    from unicorn.arm_const import UC_ARM_REG_PC, UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_SP, UC_CPU_ARM_CORTEX_M4

    uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
    uc.ctl_set_cpu_model(UC_CPU_ARM_CORTEX_M4)
    for base, size in MEMORY:
        uc.mem_map(base, size)
    symbols = _load(elf, uc, mark_symbol)
    mark_start, mark_end = symbols.mark or (-1, -1)
    disassembler = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    disassembler.detail = True
    host = SemihostingHost(lambda address, size: bytes(uc.mem_read(address, size)), uc.mem_write)
    blocks: dict[int, BlockTally] = {}
    events: list[tuple[int, int, int]] = []  # (mark, outside instructions, outside cycles) on entering the mark
    previous = BlockTally(0, 0, 0, False, "")
    fallthrough = executed = outside = outside_cycles = 0

    def decode(address: int, size: int) -> BlockTally:
        instructions, cycles, refill, end = 0, 0, 0, address
        for instruction in disassembler.disasm(bytes(uc.mem_read(address, size)), address):
            base, refill = cortex_m4_timing.cycles(instruction)
            instructions, cycles, end = instructions + 1, cycles + base, end + instruction.size
        if end != address + size:
            raise CountingError(f"capstone cannot decode the block at 0x{address:x} (+{size} bytes) at 0x{end:x}")
        return BlockTally(instructions, cycles, refill, not mark_start <= address < mark_end, symbols.function(address))

    def on_block(engine: Any, address: int, size: int, _: Any) -> None:
        nonlocal previous, fallthrough, executed, outside, outside_cycles
        block = blocks.get(address << 16 | size)
        if block is None:
            block = blocks[address << 16 | size] = decode(address, size)
        if address != fallthrough and previous.refill:
            previous.redirected += 1
            if previous.outside:
                outside_cycles += previous.refill
        if address == mark_start:
            events.append((engine.reg_read(UC_ARM_REG_R0), outside, outside_cycles))
        block.hits += 1
        executed += block.instructions
        if block.outside:
            outside += block.instructions
            outside_cycles += block.cycles
        previous, fallthrough = block, address + size
        if executed > timeout_instructions:
            engine.emu_stop()

    def on_interrupt(engine: Any, number: int, _: Any) -> None:
        pc = engine.reg_read(UC_ARM_REG_PC)
        if number != 7 or engine.mem_read(pc, 2) != b"\xab\xbe":  # EXCP_BKPT at BKPT 0xAB
            engine.emu_stop()
            raise CountingError(f"exception {number} at pc 0x{pc:x}")
        try:
            result = host.call(engine.reg_read(UC_ARM_REG_R0), engine.reg_read(UC_ARM_REG_R1))
        except SemihostingError as error:
            engine.emu_stop()
            raise CountingError(f"{error} (at pc 0x{pc:x})") from error
        engine.reg_write(UC_ARM_REG_R0, result)
        if host.exit_status is None:
            engine.reg_write(UC_ARM_REG_PC, (pc + 2) | 1)
        else:
            engine.emu_stop()

    uc.hook_add(UC_HOOK_BLOCK, on_block)
    uc.hook_add(UC_HOOK_INTR, on_interrupt)
    stack, reset = struct.unpack("<II", uc.mem_read(0, 8))
    uc.reg_write(UC_ARM_REG_SP, stack)
    start = time.monotonic()
    try:
        uc.emu_start(reset | 1, 0xFFFFFFFF)
    except UcError as error:
        raise CountingError(f"{error} at pc 0x{uc.reg_read(UC_ARM_REG_PC):x}; printed so far:\n"
                            + "".join(host.stdout + host.stderr)) from error
    seconds = time.monotonic() - start
    return summarise(host.exit_status, "".join(host.stdout), "".join(host.stderr), list(blocks.values()), events,
                     seconds)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m deeploy_core.emulation.instruction_counting ELF``: run ELF under the counter and print the
    totals, the layers and the functions with most instructions; exits with the program's status."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m deeploy_core.emulation.instruction_counting",
                                     description="Count the instructions (and estimate the cycles) of a Cortex-M4 "
                                                 "program built for mps2-an386, per layer and per function.")
    parser.add_argument("elf", type=Path)
    parser.add_argument("--top", type=int, default=10, help="functions to list (default 10)")
    parser.add_argument("--mark-symbol", default=PROFILE_MARK, help=f"the profile mark (default {PROFILE_MARK})")
    parser.add_argument("--timeout-instructions", type=int, default=1_000_000_000)
    arguments = parser.parse_args(argv)
    try:
        profile = count_instructions(arguments.elf, timeout_instructions=arguments.timeout_instructions,
                                     mark_symbol=arguments.mark_symbol)
    except (ImportError, CountingError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(profile.stdout, end="")
    print(profile.stderr, end="", file=sys.stderr)
    print(f"exit status {profile.exit_status}: {profile.instructions:,} instructions, ~{profile.cycles:,} cycles "
          f"(estimated) in {profile.seconds:.2f} s")
    if profile.layers:
        print(f"inference ({profile.inferences}x): {profile.inference_instructions:,} instructions, "
              f"~{profile.inference_cycles:,} cycles")
        for layer in profile.layers:
            print(f"  layer {layer.index:3d}: {layer.instructions:12,} instructions  ~{layer.cycles:12,} cycles")
    print(f"top {arguments.top} functions (instructions, ~cycles):")
    for function in profile.functions[:arguments.top]:
        print(f"  {function.instructions:12,}  ~{function.cycles:12,}  {function.name}")
    return profile.exit_status if profile.exit_status is not None else 124


if __name__ == "__main__":
    sys.exit(main())
