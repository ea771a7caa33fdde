"""The figures a sweep keeps per point, read off report.json, and the two the Pareto view plots.

A point's ``figures`` are the report's: ``arena_bytes``, ``weight_bytes``,
``level_peaks`` and ``traffic`` (tiled compiles), ``estimated_cycles`` (when
the platform estimates them, e.g. pulp-cluster), plus ``memory_bytes`` (below)
and ``compile_seconds`` (the compile's stages, from its timings: not
reproducible, so never compared).  With validation, also whether the outputs
matched and the largest error.

The Pareto view plots, per network:

* memory, :func:`memory_bytes`: the sum of ``level_peaks`` — the most bytes
  the generated code occupies at once in each level of the hierarchy (L1, L2,
  L3 …, constants counted where the platform places them), added up; for an
  untiled compile, which has no levels, the activation arena;
* against estimated cycles when every plotted point of that network has
  them, otherwise against compile time (labelled so on the plot).
"""

from __future__ import annotations

from typing import Any, Mapping

MEMORY_DEFINITION = ("memory = sum of report.json's level_peaks (peak bytes in use per level: L1 + L2 + L3 …, "
                     "constants included where the platform places them in a level); arena bytes when untiled")
CYCLES_LABEL = "estimated cycles (the platform's cost model)"
SECONDS_LABEL = "compile time in s (the platform estimates no cycles; not reproducible)"

REPRODUCIBLE_EXCEPT = ("compile_seconds",)
"""Figures that differ between two runs of the same point (everything else is the compiler's deterministic output)."""


def memory_bytes(report: Mapping[str, Any]) -> int:
    """The memory figure of the Pareto view (see the module docstring)."""
    peaks = report.get("level_peaks")
    if peaks:
        return int(sum(int(value) for value in peaks.values()))
    return int(report["memory"]["arena_bytes"])


def compile_seconds(timings: Mapping[str, Mapping[str, float]]) -> float:
    """The compile's own time: its stages up to code generation (writing and building files are not compiling)."""
    stages = timings.get("stages", {})
    return round(sum(seconds for stage, seconds in stages.items() if stage != "write"), 6)


def report_figures(report: Mapping[str, Any], timings: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """A successful point's figures."""
    figures: dict[str, Any] = {
        "memory_bytes": memory_bytes(report),
        "arena_bytes": int(report["memory"]["arena_bytes"]),
        "weight_bytes": int(report.get("weight_bytes", 0)),
    }
    for name in ("level_peaks", "traffic"):
        if name in report:
            figures[name] = dict(report[name])
    if report.get("estimated_cycles") is not None:
        figures["estimated_cycles"] = int(report["estimated_cycles"])
    figures["compile_seconds"] = compile_seconds(timings)
    return figures


def reproducible(figures: Mapping[str, Any]) -> dict[str, Any]:
    """The figures two runs of one point must agree on."""
    return {name: value for name, value in figures.items() if name not in REPRODUCIBLE_EXCEPT}
