"""Folders the running process made and must not leave behind, even when a signal ends it.

A compile writes into a staging folder beside its output and then swaps it in;
a validation builds in a scratch folder.  Ctrl-C or SIGTERM can arrive at any
moment, also while the main thread sits inside a long native call (a CP-SAT
solve).  The interrupt handler (``deeploy_core.cli.interrupts``) then removes
every folder registered here.  The swap of an output folder runs under
:func:`commit_guard`, so an interrupt waits for it: the user's folder is either
the old one or the new one, never half of each.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_lock = threading.Lock()
_registered: list[Path] = []


def register(path: Path) -> None:
    """Remove ``path`` if the process is interrupted before :func:`unregister`."""
    with _lock:
        _registered.append(path)


def unregister(path: Path) -> None:
    with _lock:
        if path in _registered:
            _registered.remove(path)


@contextmanager
def commit_guard() -> Iterator[None]:
    """Hold off interrupt clean-up while a multi-step change of the user's files runs (keep it short)."""
    with _lock:
        yield


def remove_registered() -> list[Path]:
    """Delete every registered folder (the interrupt path); waits for a running commit. Returns what it removed."""
    _lock.acquire()  # never released: the process exits right after
    removed = list(_registered)
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    _registered.clear()
    return removed


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A temporary folder (system temp dir) removed on exit and on interrupt."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    register(path)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        unregister(path)
