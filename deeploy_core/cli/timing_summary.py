"""The one line that says where a compile's time went.

A user waiting a minute for a compile wants to know whether it was the
tiling solver, the allocator or the import, without a profiler.  The figures
come from :attr:`GeneratedNetwork.timings <deeploy_core.network.GeneratedNetwork.timings>`
(the same ones ``timings.json`` holds), so the line and the file agree.
"""

from __future__ import annotations

from typing import Mapping

from deeploy_core.deployer.stages import STAGE_TIMINGS

PART_OF_STAGE = {"tiling": "bind"}
"""Stage parts measured inside a stage, by the stage they run in (the tiler solves during ``bind``)."""


def seconds_text(seconds: float) -> str:
    """``1.23 s``: hundredths are as fine as a wall clock between runs is repeatable."""
    return f"{seconds:.2f} s"


def part_text(name: str, figures: Mapping[str, float]) -> str:
    """``tiling: model build 0.05 s, solve 1.10 s, allocation 0.02 s``."""
    return f"{name}: " + ", ".join(f"{key.replace('_', ' ')} {seconds_text(value)}" for key, value in figures.items())


def timing_summary(timings: Mapping[str, Mapping[str, float]], extra: Mapping[str, float] | None = None) -> str:
    """``timings: frontend 0.05 s, …, bind 1.22 s (tiling: …), generate 0.03 s, write 0.01 s; total 1.32 s``.

    Stages appear in the order they ran, then ``extra`` stages a command timed
    itself (``build and run``); a stage part follows the stage it ran in, a
    part of no known stage comes after the total.  The total adds up the stages.
    """
    stages = {**timings.get(STAGE_TIMINGS, {}), **(extra or {})}
    parts = {name: figures for name, figures in timings.items() if name != STAGE_TIMINGS and figures}
    pieces = []
    for stage, seconds in stages.items():
        inside = [part_text(name, figures) for name, figures in parts.items() if PART_OF_STAGE.get(name) == stage]
        pieces.append(f"{stage} {seconds_text(seconds)}" + (f" ({'; '.join(inside)})" if inside else ""))
    loose = [part_text(name, figures) for name, figures in parts.items() if PART_OF_STAGE.get(name) not in stages]
    line = f"timings: {', '.join(pieces)}; total {seconds_text(sum(stages.values()))}"
    return line + (f" ({'; '.join(loose)})" if loose else "")
