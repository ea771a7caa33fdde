"""Ctrl-C and SIGTERM end a command within a second, with exit code 128 + signal and one line.

Python runs a signal handler only between bytecodes of the main thread, and
the main thread may be inside a native call that takes many seconds (a CP-SAT
solve; its own SIGINT catching is switched off in ``tiling.cp_model``).  So
the handler itself does nothing but make Python write the signal number to a
wake-up pipe; a watcher thread blocked on that pipe removes the temporary
folders the process registered (``deeploy_core.temporary_paths``), prints
``interrupted`` and exits at once.  Native solvers release the GIL while they
search, so the watcher runs even then.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType

from deeploy_core.temporary_paths import remove_registered

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _note_signal(signum: int, frame: FrameType | None) -> None:
    """Installed so that Python writes ``signum`` to the wake-up pipe; the watcher does the work."""


def _watch(read_end: int) -> None:
    data = os.read(read_end, 1)
    signum = data[0] if data else signal.SIGINT
    remove_registered()
    try:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(128 + signum)


def install_interrupt_handling() -> None:
    """Route SIGINT/SIGTERM to the watcher thread (call once, from the main thread, before any work)."""
    if threading.current_thread() is not threading.main_thread():
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    for signum in HANDLED_SIGNALS:
        signal.signal(signum, _note_signal)
    threading.Thread(target=_watch, args=(read_end,), name="deeploy-core-interrupts", daemon=True).start()
