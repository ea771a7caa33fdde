"""``validate --profile``'s per-layer table (and the lines under it)."""

from __future__ import annotations

from deeploy_core.cli.table_output import TextTable, clipped_label
from deeploy_core.report.layer_profile import LayerProfile

TIME_COLUMNS = ("layer", "op", "kernel", "MACs", "µs", "%")
ESTIMATE_COLUMNS = ("est. cycles", "MAC/cycle (est.)")
"""Only where the platform has a cost model: the host has no cycle counter to measure MAC/cycle with."""


def profile_table(profile: LayerProfile) -> TextTable:
    """One row per timed region, in execution order."""
    columns = TIME_COLUMNS + (ESTIMATE_COLUMNS if profile.has_estimate else ())
    table = TextTable(columns, title=f"per-layer time of {profile.network} on {profile.platform} "
                                     f"(best of {profile.repeats} run(s) per layer)",
                      numeric=frozenset(columns[3:]))
    for row in profile.rows:
        cells: list[object] = [clipped_label(row.short_label), row.op, row.kernel, f"{row.macs:,}", f"{row.ns / 1e3:.1f}",
                               f"{profile.share(row):.1f}"]
        if profile.has_estimate:
            cells += row.estimate_cells
        table.add_row(*cells)
    return table


def profile_footer(profile: LayerProfile) -> list[str]:
    """What the table's figures are, said once under it."""
    lines = [f"summed layer times: {profile.total_ns / 1e3:.1f} µs (host clock, clock_gettime)"]
    if any(row.fused for row in profile.rows):
        lines.append("N fused: the layers from the first to the last named run in one tile loop, timed together")
    if profile.has_estimate:
        lines.append(f"est. cycles: {profile.platform}'s cost model (target); µs: this host (emulated)")
    else:
        lines.append("no MAC/cycle column: the host build reads a clock, not a cycle counter")
    return lines
