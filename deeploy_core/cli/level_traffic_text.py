"""How ``analyze`` shows a tiled compile's memory levels and traffic: the figures of report.json, as text.

``level_peaks`` becomes a table (one row per level, its capacity beside its
peak), ``traffic`` one line and ``tiling.patterns`` a table of the fused patterns, so that what a reader compares between two
L1 sizes or buffering schemes is printed where the per-layer tables end, with
the very numbers report.json (and ``analyze --json``) holds.
"""

from __future__ import annotations

from typing import Any

from deeploy_core.cli.table_output import TextTable

LEVEL_COLUMNS = ("level", "capacity B", "peak B")
PATTERN_COLUMNS = ("fused pattern", "ops", "tiles", "bytes in", "bytes out", "halo overhead")


def levels_table(report: dict[str, Any]) -> TextTable | None:
    """Per level of the hierarchy: its capacity (``unbounded``, or ``-`` for a level the compile does not size)
    and its peak use; None for an untiled compile, which has no levels."""
    peaks = report.get("level_peaks")
    if peaks is None:
        return None
    table = TextTable(LEVEL_COLUMNS, title="memory levels", numeric=frozenset(LEVEL_COLUMNS[1:]))
    for level, peak in sorted(peaks.items()):
        table.add_row(level, capacity_text(report, level), peak)
    return table


def capacity_text(report: dict[str, Any], level: str) -> str:
    """The level's capacity as ``memory_levels`` gives it; ``-`` for a level it does not list (nothing placed)."""
    entry = report.get("memory_levels", {}).get(level)
    if entry is None:
        return "-"
    return "unbounded" if entry["capacity"] is None else str(entry["capacity"])


def traffic_line(report: dict[str, Any]) -> str | None:
    """``traffic per inference: L1->L2 N B, L2->L1 N B, ...`` (links sorted), or None for an untiled compile."""
    traffic = report.get("traffic")
    if traffic is None:
        return None
    return "traffic per inference: " + ", ".join(f"{link} {count} B" for link, count in sorted(traffic.items()))


def patterns_table(report: dict[str, Any]) -> TextTable | None:
    """One row per fused pattern (``tiling.patterns``): its layers, ops, tiles, bytes moved and the share of its
    intermediate tensors computed twice; None when nothing is fused (or the compile is untiled)."""
    patterns = report.get("tiling", {}).get("patterns")
    if not patterns:
        return None
    table = TextTable(PATTERN_COLUMNS, title="fused patterns", numeric=frozenset(PATTERN_COLUMNS[2:]))
    for pattern in patterns:
        table.add_row(" -> ".join(pattern["layers"]), " -> ".join(pattern["ops"]), pattern["tiles"],
                      pattern["bytes_in"], pattern["bytes_out"], f"{100 * pattern['halo_overhead']:.1f} %")
    return table
