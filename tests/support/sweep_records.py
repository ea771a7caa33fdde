"""The records of a small sweep, as ``deeploy-core sweep`` writes them, for the tests that draw its Pareto page.

``tests/test_pareto_layout.py`` checks the page's layout in Chromium and ``tests/test_pages_at_80_columns.py``
renders it at a terminal's width; both draw the same sweep, which lives here so that neither imports the other.
"""

from __future__ import annotations

import itertools


def sweep_records() -> list[dict]:
    """A sweep as a user runs it: three L1 sizes x two bufferings x two allocators; double buffering with the
    largest L1 costs more cycles than the middle size (the tiler's fewest-tiles objective)."""
    records = []
    for index, (l1, buffering, allocator) in enumerate(itertools.product(
            (16384, 32768, 65536), ("single", "double"), ("first-fit", "minimalloc"))):
        memory = l1 // 2 + (4000 if buffering == "double" else 0) + (0 if allocator == "minimalloc" else 900)
        cycles = {16384: 910_000, 32768: 640_000, 65536: 700_000}[l1] - (90_000 if buffering == "double" else 0)
        records.append({"key": str(index), "network": "miniMobileNet", "status": "ok", "message": "",
                        "options": {"l1": l1, "buffering": buffering, "allocator": allocator},
                        "figures": {"memory_bytes": memory + 200_000, "estimated_cycles": cycles,
                                    "compile_seconds": 1.0}})
    return records
