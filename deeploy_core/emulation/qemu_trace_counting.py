"""Instructions (exact) of a program on any core QEMU emulates, per layer, per function and in all, from QEMU's trace.

The Unicorn counter (:mod:`.instruction_counting`) models a Cortex-M4 only;
Unicorn has no Helium (MVE), so a Cortex-M55 program cannot run there.
QEMU itself runs it, and its own logs say what it executed:
``-d in_asm`` prints each translation block's instructions when the block is
translated, ``-d exec`` a line each time a block runs (with ``nochain``, every
time: blocks are not chained past the log), naming the block's guest pc, its
translation flags and the symbol it is in.  A block's instruction count is
the number of instructions of its latest translation for that (pc, flags);
the sum over the executed blocks is every instruction the core executed,
counted as :mod:`.instruction_counting` counts them (an instruction in an IT
or VPT block whose condition fails is part of its block and counted).  There
is no timing model here: the profile's cycles are 0 and reports say that no
cycles were estimated.

Layers: the exec line does not carry registers, so the argument of the
profile mark (k before layer k, the layer count after the last) is not read
but known: ``RunNetwork`` calls the mark with 0, 1, ..., ``layer_count`` in
this order on every inference, so the i-th entry into the mark function is
mark ``i mod (layer_count + 1)``.  Layer attribution is then the Unicorn
counter's (:func:`~deeploy_core.emulation.instruction_profile.summarise`).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from deeploy_core.emulation.instruction_profile import BlockTally, InstructionProfile, summarise

TRACE_FLAGS = ("-d", "in_asm,exec,nochain")
"""QEMU's log items: the instructions of each translated block, and every executed block."""
INSTRUCTION = re.compile(r"^0x[0-9a-f]+:\s")
"""An instruction line of an ``IN:`` block (``0x28000304:  f04f 22e0  mov.w r2, #...``)."""
EXECUTED = re.compile(r"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/([0-9a-f]+)/[0-9a-f]+\] ?(.*)$")
"""An executed block: ``Trace CPU: HOST [CS_BASE/PC/FLAGS/CFLAGS] SYMBOL``."""
TIMEOUT = 600.0
"""Seconds before the traced run is stopped (a traced run is several times slower than a plain one)."""


class TraceCountingError(Exception):
    """QEMU's trace could not be read into counts (a block ran that was never translated in the log)."""


def tally_trace(lines: Iterable[str], mark_symbol: str, layer_count: int
                ) -> tuple[list[BlockTally], list[tuple[int, int, int]]]:
    """The blocks (with their hits) and the mark events of a trace, read line by line.

    The mark function is a leaf without loops (``dc_profile_mark.c``: one empty asm), so a call to it is a run
    of consecutive blocks in it; the first of each run is an entry.
    """
    translated: list[BlockTally] = []
    blocks: dict[tuple[int, int], BlockTally] = {}
    latest: dict[int, BlockTally] = {}
    pending_pc: int | None = None
    pending_count = 0
    in_block = False
    events: list[tuple[int, int, int]] = []
    outside = marks = 0
    previous_symbol = ""
    for line in lines:
        if line.startswith("IN:"):
            in_block, pending_pc, pending_count = True, None, 0
            continue
        if in_block:
            if INSTRUCTION.match(line):
                if pending_pc is None:
                    pending_pc = int(line.split(":", 1)[0], 16)
                pending_count += 1
                continue
            in_block = False
        executed = EXECUTED.match(line)
        if executed is None:
            continue
        pc, flags = int(executed[1], 16), int(executed[2], 16)
        symbol = executed[3].strip() or f"<0x{pc:x}>"
        if pending_pc == pc:
            fresh = BlockTally(pending_count, 0, 0, symbol != mark_symbol, symbol)
            translated.append(fresh)
            blocks[(pc, flags)] = latest[pc] = fresh
            pending_pc = None
        block = blocks.get((pc, flags)) or latest.get(pc)
        if block is None:
            raise TraceCountingError(f"the block at 0x{pc:x} ({symbol}) ran but its translation is not in the trace")
        if symbol == mark_symbol and previous_symbol != mark_symbol:
            events.append((marks % (layer_count + 1), outside, 0))
            marks += 1
        block.hits += 1
        if block.outside:
            outside += block.instructions
        previous_symbol = symbol
    return translated, events


def count_from_qemu_trace(emulator: Sequence[str], elf: Path, layer_count: int, *,
                          mark_symbol: str = "DeeployNetwork_profile_mark",
                          timeout: float = TIMEOUT) -> InstructionProfile:
    """Run ``elf`` with ``emulator`` (a ``qemu-system-* ... -kernel`` command, the ELF appended) and QEMU's trace
    logging, and count what it executed.

    ``layer_count`` is the network's layer count (the marks run 0..layer_count per inference).  Raises
    :class:`TraceCountingError` when the trace cannot be read and ``subprocess.TimeoutExpired`` when the run does
    not finish in ``timeout`` seconds.
    """
    if not emulator or not Path(emulator[0]).name.startswith("qemu-system-"):
        raise TraceCountingError(f"counting from a trace needs a qemu-system-* emulator, not {list(emulator)[:1]}")
    with tempfile.TemporaryDirectory(prefix="dc_qemu_trace_") as scratch:
        log = Path(scratch) / "trace.log"
        command = [emulator[0], *TRACE_FLAGS, "-D", str(log), *emulator[1:], str(elf)]
        started = time.monotonic()
        with (Path(scratch) / "stdout").open("w+b") as out, (Path(scratch) / "stderr").open("w+b") as err:
            status = subprocess.run(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    timeout=timeout).returncode
            out.seek(0)
            err.seek(0)
            stdout, stderr = (stream.read().decode("utf-8", "replace") for stream in (out, err))
        seconds = time.monotonic() - started
        with log.open(encoding="utf-8", errors="replace") as lines:
            blocks, events = tally_trace(lines, mark_symbol, layer_count)
    return summarise(status, stdout, stderr, blocks, events, seconds)
