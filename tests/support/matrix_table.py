"""The build matrix as Markdown: verdict counts per network kind and build, then every cell that is not identical.

One row per build (compiler, flags, target) and one column per network kind
keeps the table readable however many networks a kind holds (a peer kind has
dozens); the list below it names each network and build that went wrong, with
the reason, so the table never hides which network it was.

``tests/test_build_matrix.py`` and ``bench/build_matrix.py`` print it; the matrix itself
(:mod:`deeploy_core.testing.build_matrix`) is for plugin authors too, this table is not, so it lives here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from deeploy_core.testing.build_matrix import IDENTICAL, STATUSES, BuildConfig, Cell


def _cell_text(counts: Counter[str]) -> str:
    """``12/12`` when all are identical; otherwise the identical count and what the rest are."""
    total = sum(counts.values())
    if total == 0:
        return ""
    text = f"{counts[IDENTICAL]}/{total}"
    others = [f"{counts[status]} {status}" for status in STATUSES if status != IDENTICAL and counts[status]]
    return text + (f" ({', '.join(others)})" if others else "")


def summary_table(results: Mapping[str, Sequence[Cell]], kinds: Mapping[str, str]) -> str:
    """Rows: builds in the order first met; columns: network kinds (``kinds`` maps each network to its kind);
    cells: how many networks of the kind the build computes identically, and what the others are."""
    builds: list[BuildConfig] = []
    counts: dict[tuple[BuildConfig, str], Counter[str]] = {}
    kind_order: list[str] = []
    for network, cells in results.items():
        kind = kinds[network]
        if kind not in kind_order:
            kind_order.append(kind)
        for cell in cells:
            if cell.config not in builds:
                builds.append(cell.config)
            counts.setdefault((cell.config, kind), Counter())[cell.status] += 1
    header = ["compiler", "flags", "target", *kind_order]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for config in builds:
        row = [config.compiler.name, f"`{config.flags}`", config.compiler.target,
               *(_cell_text(counts.get((config, kind), Counter())) for kind in kind_order)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def problem_list(results: Mapping[str, Sequence[Cell]]) -> str:
    """A Markdown table of every cell that is not identical (network, build, verdict, why); empty if none."""
    rows = [(network, cell) for network, cells in results.items() for cell in cells if not cell.ok]
    if not rows:
        return ""
    lines = ["| network | build | verdict | detail |", "|---|---|---|---|"]
    for network, cell in rows:
        detail = cell.detail.replace("|", "\\|").replace("\n", " ")
        if len(detail) > 300:
            detail = detail[:297] + "..."
        lines.append(f"| {network} | {cell.config.label} | {cell.status} | {detail} |")
    return "\n".join(lines)


def status_counts(results: Mapping[str, Sequence[Cell]]) -> Counter[str]:
    """How many cells have each verdict."""
    return Counter(cell.status for cells in results.values() for cell in cells)
