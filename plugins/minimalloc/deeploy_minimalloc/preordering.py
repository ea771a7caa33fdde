"""Static preordering heuristics: which buffer the search tries first at equal offsets.

MiniMalloc's search orders candidates dynamically by the lowest offset each
could take, but many buffers tie at the same offset; the tie is broken by a
static rank computed when a (sub-)partition is solved.  A heuristic is a short
string of letters, each naming a property, compared in turn, larger first;
buffers equal in every property keep their input order, so the rank is a total
order and the search is deterministic.

The paper's default tries ``WAT``, ``TAW`` and ``TWA`` in a round robin: big
and long-lived buffers are the hard ones to fit, and placing them first exposes
an infeasible branch early.
"""

from __future__ import annotations

from typing import Sequence

from deeploy_core.plugin_api import DeeployError

HEURISTIC_LETTERS: dict[str, str] = {
    "A": "area (size x lifetime width)",
    "C": "number of sections spanned",
    "L": "lower end of the lifetime",
    "O": "number of buffers overlapping in time",
    "T": "largest remaining total size of any section the buffer lives in",
    "U": "upper end of the lifetime",
    "W": "width of the lifetime",
    "Z": "size",
}
"""Every property a heuristic may name (all compared in descending order)."""

DEFAULT_PREORDERING: tuple[str, ...] = ("WAT", "TAW", "TWA")
"""The paper's round robin of heuristics."""


def normalise_preordering(preordering: str | Sequence[str]) -> tuple[str, ...]:
    """Validate heuristics given as one string (``"WAT"``), a comma-separated list or a sequence."""
    if isinstance(preordering, str):
        items = [item.strip() for item in preordering.split(",")]
    else:
        items = [str(item).strip() for item in preordering]
    heuristics = tuple(item.upper() for item in items if item)
    if not heuristics:
        raise DeeployError("minimalloc: preordering needs at least one heuristic, e.g. 'WAT'")
    for heuristic in heuristics:
        unknown = sorted(set(heuristic) - set(HEURISTIC_LETTERS))
        if unknown:
            raise DeeployError(f"minimalloc: preordering heuristic {heuristic!r} has unknown letter(s) "
                               f"{', '.join(unknown)} (known: {''.join(HEURISTIC_LETTERS)})")
    return heuristics
