"""What a counted run found: its outcome, and instructions and cycles per layer, per function and in all.

The result types of :mod:`~deeploy_core.emulation.instruction_counting` and the
bookkeeping that turns its raw tallies into them, kept apart from the
emulation so that each part stays readable: the counter only tallies how often
each translation block ran and reads a counter when a profile mark is entered;
everything a caller sees is summed up here, once, after the run.
"""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True)
class LayerCount:
    """What one layer executed (all inferences together), so a plugin can compare kernels layer by layer."""

    index: int
    instructions: int
    cycles: int
    """Estimated with :mod:`.cortex_m4_timing`: not a measurement."""


@dataclass(frozen=True)
class FunctionCount:
    """What executed inside one C function (by symbol table), e.g. to tell CMSIS-NN's kernels from glue code."""

    name: str
    """The symbol; ``<0x...>`` for code outside every sized function symbol."""
    instructions: int
    cycles: int


@dataclass(frozen=True)
class InstructionProfile:
    """One run of a program under the counter: its outcome and where its instructions went."""

    exit_status: int | None
    """The program's exit status (from SYS_EXIT / SYS_EXIT_EXTENDED); None when the budget ran out first."""
    stdout: str
    stderr: str
    instructions: int
    """Every instruction executed, start-up and C library included."""
    cycles: int
    """Estimated (:mod:`.cortex_m4_timing`)."""
    layers: tuple[LayerCount, ...]
    """Indexed by layer; empty when the program never called the profile mark."""
    inferences: int
    """How many times the mark went from 0 to the layer count (``RunNetwork`` calls)."""
    inference_instructions: int
    """From entering mark 0 to entering the last mark, outside the mark function, over all inferences."""
    inference_cycles: int
    functions: tuple[FunctionCount, ...]
    """Most instructions first."""
    seconds: float
    """Wall time of the emulation."""


class BlockTally:
    """A translation block decoded once: its cost, and how often it ran and ended in a redirection."""

    __slots__ = ("instructions", "cycles", "refill", "outside", "hits", "redirected", "function")

    def __init__(self, instructions: int, cycles: int, refill: int, outside: bool, function: str) -> None:
        self.instructions, self.cycles, self.refill, self.function = instructions, cycles, refill, function
        self.outside = outside
        """Not in the mark function: counts towards the layers."""
        self.hits = self.redirected = 0


def summarise(exit_status: int | None, stdout: str, stderr: str, blocks: list[BlockTally],
              events: list[tuple[int, int, int]], seconds: float) -> InstructionProfile:
    """The profile of a run: totals and functions from the blocks' tallies, layers and inferences from
    ``events``, the (mark, instructions, cycles) read outside the mark function whenever the mark was entered."""
    functions: dict[str, list[int]] = {}
    for block in blocks:
        totals = functions.setdefault(block.function, [0, 0])
        totals[0] += block.hits * block.instructions
        totals[1] += block.hits * block.cycles + block.redirected * block.refill
    last = max((mark for mark, _, _ in events), default=0)
    layers = [[0, 0] for _ in range(last)]
    inferences = inference_instructions = inference_cycles = 0
    started: tuple[int, int] | None = None
    for (mark, instructions, cycles), following in zip(events, events[1:] + [(-1, 0, 0)]):
        if following[0] == mark + 1:
            layers[mark][0] += following[1] - instructions
            layers[mark][1] += following[2] - cycles
        if mark == 0:
            started = (instructions, cycles)
        elif mark == last and started is not None:
            inferences += 1
            inference_instructions += instructions - started[0]
            inference_cycles += cycles - started[1]
            started = None
    ranked = sorted(functions.items(), key=lambda item: (-item[1][0], item[0]))
    return InstructionProfile(
        exit_status=exit_status, stdout=stdout, stderr=stderr,
        instructions=sum(totals[0] for _, totals in ranked), cycles=sum(totals[1] for _, totals in ranked),
        layers=tuple(LayerCount(index, *counts) for index, counts in enumerate(layers)), inferences=inferences,
        inference_instructions=inference_instructions, inference_cycles=inference_cycles,
        functions=tuple(FunctionCount(name, *totals) for name, totals in ranked), seconds=seconds)
