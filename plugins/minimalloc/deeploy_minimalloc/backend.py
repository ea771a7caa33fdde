"""Choosing between the native and the pure-Python search, and running one search with the choice.

Both backends implement the same search node for node (the tests compare
their offsets and node counts), so the choice only changes speed.  ``auto``
takes the native one when it was built at install time.  The environment
variable lets a user force a backend without touching code (e.g. to rule the
C core out when debugging).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from deeploy_core.plugin_api import DeeployError

from deeploy_minimalloc.instance import SearchInstance
from deeploy_minimalloc.native_search import native_module, run_native
from deeploy_minimalloc.outcome import SearchOutcome
from deeploy_minimalloc.python_search import PythonSearch

BACKEND_ENV = "DEEPLOY_MINIMALLOC_BACKEND"
"""Environment variable naming the backend when the ``backend`` option is not given."""

BACKENDS = ("auto", "native", "python")


def native_available() -> bool:
    """Whether the C search core was built for this installation."""
    return native_module() is not None


def resolve_backend(requested: str | None = None) -> str:
    """``native`` or ``python`` from an option value (or, if None, the environment; default ``auto``)."""
    name = requested if requested is not None else os.environ.get(BACKEND_ENV, "auto")
    name = name.strip().lower() or "auto"
    if name not in BACKENDS:
        source = "backend option" if requested is not None else BACKEND_ENV
        raise DeeployError(f"minimalloc: unknown backend {name!r} in {source} (choose from {', '.join(BACKENDS)})")
    if name == "auto":
        return "native" if native_available() else "python"
    if name == "native" and not native_available():
        raise DeeployError("minimalloc: the native backend is not built in this installation "
                           "(reinstall deeploy-minimalloc with a C compiler, or use backend 'python')")
    return name


@dataclass(frozen=True)
class SearchSettings:
    """What stays the same across the searches of one ``solve``: backend, heuristics, node budget."""

    backend: str
    heuristics: tuple[str, ...]
    node_limit: int | None = None

    def run(self, instance: SearchInstance, capacity: int, time_limit: float | None) -> SearchOutcome:
        """Decide whether ``instance`` fits ``capacity``, within ``time_limit`` seconds (None: no limit)."""
        return run_search(instance, capacity, self.heuristics, self.node_limit, time_limit, self.backend)


def run_search(instance: SearchInstance, capacity: int, heuristics: Sequence[str], node_limit: int | None,
               time_limit: float | None, backend: str) -> SearchOutcome:
    """One decision search on the given (already resolved) backend."""
    if backend == "native":
        return run_native(instance, capacity, heuristics, node_limit, time_limit)
    if backend == "python":
        return PythonSearch(instance, capacity, heuristics, node_limit, time_limit).run()
    raise ValueError(f"backend must be 'native' or 'python' once resolved, got {backend!r}")
