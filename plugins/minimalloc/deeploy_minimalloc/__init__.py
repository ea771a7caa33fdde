"""MiniMalloc for deeploy_core: an exact static memory allocator for tight memories.

``MiniMallocAllocator`` is what the ``minimalloc`` allocator extension makes;
the search itself runs on a C core when it was built, else in pure Python,
with identical results.
"""

from deeploy_minimalloc.allocator import (DEFAULT_TIME_LIMIT, MINIMISE_NODE_BUDGET, MINIMISE_NODE_LIMIT,
                                          MiniMallocAllocator)
from deeploy_minimalloc.backend import BACKEND_ENV, native_available, resolve_backend
from deeploy_minimalloc.outcome import SearchOutcome, SearchStatus
from deeploy_minimalloc.preordering import DEFAULT_PREORDERING, HEURISTIC_LETTERS
from deeploy_minimalloc.report import MiniMallocReport, Probe

__version__ = "0.1.0"

__all__ = [
    "BACKEND_ENV",
    "DEFAULT_PREORDERING",
    "DEFAULT_TIME_LIMIT",
    "HEURISTIC_LETTERS",
    "MINIMISE_NODE_BUDGET",
    "MINIMISE_NODE_LIMIT",
    "MiniMallocAllocator",
    "MiniMallocReport",
    "Probe",
    "SearchOutcome",
    "SearchStatus",
    "__version__",
    "native_available",
    "resolve_backend",
]
