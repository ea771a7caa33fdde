"""``validate``'s lines for a network that ran on its board: instructions and estimated cycles per layer.

On a board there is no host clock to time the run with (the best-time line
would be meaningless); what validate can say is how many instructions each
layer executed on the core, counted exactly under the instruction counter, and
an estimate of their cycles.  The table has the style of ``--profile``'s
per-layer table (:mod:`deeploy_core.cli.profile_table`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deeploy_core.cli.table_output import TextTable, clipped_label
from deeploy_core.report.layer_profile import node_label
from deeploy_core.validate.target_result import TargetRun

TARGET_COLUMNS = ("layer", "op", "kernel", "instructions", "est. cycles", "%")
"""``%``: the layer's share of the inference's instructions."""


def target_table(run: TargetRun, report: Mapping[str, Any], network: str) -> TextTable | None:
    """One row per layer of one inference, in execution order; None when the run was not counted."""
    if run.counts is None:
        return None
    layers = list(report.get("layers", ()))
    total = max(run.counts.instructions, 1)
    table = TextTable(TARGET_COLUMNS, title=f"per-layer instructions of {network} on {run.board} "
                                            f"({run.emulator}, per inference)", numeric=frozenset(TARGET_COLUMNS[3:]))
    for layer in run.counts.layers:
        known = layers[layer.index] if layer.index < len(layers) else None
        table.add_row(clipped_label(node_label(known)) if known else f"#{layer.index}", known["op"] if known else "-",
                      known["kernel"] if known else "-", f"{layer.instructions:,}",
                      f"{layer.cycles:,}" if run.counts.cycle_model else "-",
                      f"{100 * layer.instructions / total:.1f}")
    return table


def target_lines(run: TargetRun) -> list[str]:
    """The totals under the table (or why there are none)."""
    counts = run.counts
    if counts is None:
        return [f"ran on {run.board} ({run.emulator}); {run.note or 'not counted'}"]
    inside = counts.cmsis_nn_instructions
    share = 100 * inside / max(counts.instructions, 1)
    cycles = (f"~{counts.cycles:,} cycles ({counts.cycle_model}; " if counts.cycle_model
              else f"no cycle estimate (counted from {run.emulator}'s trace; ")
    return [
        f"per inference on {run.board}: {counts.instructions:,} instructions, {cycles}"
        f"{counts.inferences} RunNetwork call(s) counted)",
        f"inside CMSIS-NN (arm_*): {inside:,} instructions ({share:.1f}%), "
        f"outside: {counts.instructions - inside:,}",
    ]
