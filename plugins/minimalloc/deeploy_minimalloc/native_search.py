"""The native (C) backend: flattens a :class:`SearchInstance` into arrays and calls ``_native.search``.

The C module is an optional build product; :func:`native_module` returns
``None`` when it was not built (no compiler at install time), and the backend
selection falls back to :mod:`deeploy_minimalloc.python_search`.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType
from typing import Sequence

from deeploy_minimalloc.instance import SearchInstance
from deeploy_minimalloc.outcome import SearchOutcome, SearchStatus


@lru_cache(maxsize=1)
def native_module() -> ModuleType | None:
    """The compiled search core, or None when this installation has none."""
    try:
        return importlib.import_module("deeploy_minimalloc._native")
    except ImportError:
        return None


def _offsets_of(groups: Sequence[Sequence[int]]) -> list[int]:
    """CSR start indices of a list of lists (``len(groups) + 1`` items)."""
    starts = [0]
    for group in groups:
        starts.append(starts[-1] + len(group))
    return starts


def run_native(instance: SearchInstance, capacity: int, heuristics: Sequence[str],
               node_limit: int | None = None, time_limit: float | None = None) -> SearchOutcome:
    """Run the C search; same arguments and same outcome as :class:`~deeploy_minimalloc.python_search.PythonSearch`."""
    module = native_module()
    if module is None:
        raise RuntimeError("the native MiniMalloc backend is not built in this installation")
    sweep = instance.sweep
    partitions = sweep.partitions
    status, offsets, nodes, backtracks, winner = module.search(
        instance.sizes, instance.lowers, instance.uppers,
        sweep.section_lower, sweep.section_upper,
        _offsets_of(sweep.overlaps), [o for found in sweep.overlaps for o in found],
        _offsets_of(sweep.sections), [b for section in sweep.sections for b in section],
        _offsets_of([p.buffers for p in partitions]), [b for p in partitions for b in p.buffers],
        [p.section_lower for p in partitions], [p.section_upper for p in partitions],
        sweep.cuts,
        capacity, instance.alignment, tuple(heuristics),
        -1 if node_limit is None else node_limit,
        -1.0 if time_limit is None else max(time_limit, 0.0),
    )
    heuristic = heuristics[winner] if status == SearchStatus.FOUND and instance.count else None
    return SearchOutcome(SearchStatus(status), tuple(offsets) if offsets is not None else (), nodes, backtracks,
                         heuristic)
