"""What validating on a board adds to a result: where it ran and, when counted, its instructions per layer.

The figures are per inference: the program runs ``RunNetwork`` ``repeats``
times on the same data, the counter sums all of them, and each run executes
the same instructions, so the sums are divided by the number of runs.
Cycles are the counter's estimate from the Cortex-M4 timing table, never a
measurement; report.json says so in ``cycle_model``.  Counts read from QEMU's
trace (cores without a timing model here, the Cortex-M55) carry no cycles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deeploy_core.report.layer_profile import node_label
from deeploy_core.emulation.instruction_profile import FunctionCount, InstructionProfile, LayerCount

CYCLE_MODEL = "cortex-m4 timing table (estimate)"
"""How the cycles were obtained (:mod:`deeploy_core.emulation.cortex_m4_timing`)."""
CMSIS_NN_PREFIX = "arm_"
"""CMSIS-NN's functions all start with it: how instructions inside the library are told from the rest."""


@dataclass(frozen=True)
class TargetCounts:
    """Instructions and estimated cycles of one inference on the board, in all and per layer."""

    instructions: int
    cycles: int
    """0 when :attr:`cycle_model` is None."""
    layers: tuple[LayerCount, ...]
    inferences: int
    """How many ``RunNetwork`` calls the counted run made (the figures are divided by it)."""
    functions: tuple[FunctionCount, ...]
    """Per C function over the whole counted run (start-up and printing included), most instructions first."""
    seconds: float
    """Wall time of the counted emulation."""
    counter: str = "unicorn"
    """Which counter ran: ``unicorn`` or ``qemu-trace`` (:class:`~deeploy_core.platform.board.BoardSupport`)."""

    @property
    def cycle_model(self) -> str | None:
        """How the cycles were estimated; None when they were not (only the Unicorn counter has a timing model)."""
        return CYCLE_MODEL if self.counter == "unicorn" else None

    @classmethod
    def of(cls, profile: InstructionProfile, counter: str = "unicorn") -> TargetCounts:
        runs = max(profile.inferences, 1)
        layers = tuple(LayerCount(layer.index, layer.instructions // runs, layer.cycles // runs)
                       for layer in profile.layers)
        return cls(profile.inference_instructions // runs, profile.inference_cycles // runs, layers,
                   profile.inferences, profile.functions, profile.seconds, counter)

    @property
    def cmsis_nn_instructions(self) -> int:
        """Instructions per inference inside CMSIS-NN (``arm_*`` functions, which only inferences call)."""
        inside = sum(function.instructions for function in self.functions if function.name.startswith(CMSIS_NN_PREFIX))
        return inside // max(self.inferences, 1)


@dataclass(frozen=True)
class TargetRun:
    """The board a validation ran on, and its counts (None, with :attr:`note` saying why, when not counted)."""

    board: str
    emulator: str
    counts: TargetCounts | None = None
    note: str | None = None

    def report_section(self, report: Mapping[str, Any]) -> dict[str, Any]:
        """report.json's ``target``: the board and, when counted, the figures per inference and per layer."""
        section: dict[str, Any] = {"board": self.board, "emulator": self.emulator}
        if self.note is not None:
            section["note"] = self.note
        counts = self.counts
        if counts is None:
            return section
        layers = list(report.get("layers", ()))
        estimated = counts.cycle_model is not None
        section.update({
            "instructions": counts.instructions, "inferences": counts.inferences,
            "cmsis_nn_instructions": counts.cmsis_nn_instructions, "counter": counts.counter,
            "layers": [{"index": layer.index,
                        "layer": node_label(layers[layer.index]) if layer.index < len(layers) else f"#{layer.index}",
                        "instructions": layer.instructions, **({"estimated_cycles": layer.cycles} if estimated else {})}
                       for layer in counts.layers],
        })
        if estimated:
            section.update({"estimated_cycles": counts.cycles, "cycle_model": counts.cycle_model})
        return section
