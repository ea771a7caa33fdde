"""Ctrl-C and SIGTERM end a command within a second, with exit code 128 + signal and one line.

Python runs a signal handler only between bytecodes of the main thread, and
the main thread may be inside a native call that takes many seconds (a CP-SAT
solve; its own SIGINT catching is switched off in ``tiling.cp_model``).  So
the handler itself does nothing but make Python write the signal number to a
wake-up pipe; a watcher thread blocked on that pipe removes the temporary
folders the process registered (``deeploy_core.temporary_paths``), stops
the progress spinner (on a terminal: its redraws would otherwise follow the
last line, and the cursor it hid would stay hidden), prints ``interrupted``
and exits at once.  Native solvers release the GIL while they
search, so the watcher runs even then.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from deeploy_core.temporary_paths import remove_registered

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _note_signal(signum: int, frame: FrameType | None) -> None:
    """Installed so that Python writes ``signum`` to the wake-up pipe; the watcher does the work."""


SHOW_CURSOR = "\x1b[?25h"
CLEAR_LINE = "\r\x1b[2K"
_live_displays: list[Callable[[], None]] = []
"""``stop`` of each animation on the terminal (the progress spinner): stopped before ``interrupted`` is printed."""


@contextmanager
def stopped_on_interrupt(stop: Callable[[], None]) -> Iterator[None]:
    """While the block runs, an interrupt calls ``stop`` (ending a spinner's redraws) before the last line."""
    _live_displays.append(stop)
    try:
        yield
    finally:
        _live_displays.remove(stop)


def _stop_live_displays() -> None:
    """Stop every animation, each within half a second (one that hangs must not keep the process alive), then give
    the cursor back and clear the spinner's line, on a terminal only."""
    for stop in list(_live_displays):
        stopper = threading.Thread(target=stop, daemon=True)
        stopper.start()
        stopper.join(0.5)
    if _live_displays and sys.stderr.isatty():
        sys.stderr.write(CLEAR_LINE + SHOW_CURSOR)


def _watch(read_end: int) -> None:
    data = os.read(read_end, 1)
    signum = data[0] if data else signal.SIGINT
    remove_registered()
    try:
        _stop_live_displays()
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
