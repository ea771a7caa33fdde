"""Progress on stderr while the long steps run, and the timing line after them.

The status line (a rich spinner) appears only when stderr is a terminal: in
a log file it would be a heap of half-drawn lines.  The timing summary is one
plain line, so it is printed wherever stderr goes; ``--quiet`` silences both.
Standard output never sees either: it carries the command's result alone.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, TypeVar

import click

from deeploy_core.cli.interrupts import stopped_on_interrupt
from deeploy_core.cli.timing_summary import timing_summary

if TYPE_CHECKING:  # rich is imported only when a spinner is drawn: scripts and logs never pay for it
    from rich.status import Status

FORCING_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
"""Environment variables with which rich treats a non-terminal stream as a terminal."""

CommandT = TypeVar("CommandT", bound=Callable[..., Any])


def quiet_option(command: CommandT) -> CommandT:
    """The ``--quiet`` switch of the commands that compile."""
    return click.option("--quiet", "-q", is_flag=True,
                        help="Print no progress and no timing summary on stderr (errors and warnings stay).")(command)


class StatusLineProgress:
    """A :class:`~deeploy_core.progress.Progress` that shows ``title: stage — detail`` in a spinner.

    It also remembers when each stage started, so a command can time the
    stages it runs itself (``build and run`` in ``validate``).  Without a
    spinner (stderr is no terminal, or ``--quiet``) it only keeps time.
    """

    def __init__(self, title: str, status: Status | None = None) -> None:
        self.title = title
        self.status = status
        self.current = ""
        self.started: dict[str, float] = {}

    def stage(self, name: str) -> None:
        """Show the stage and note when it started."""
        self.current = name
        self.started[name] = time.perf_counter()
        self._show("")

    def task(self, text: str) -> None:
        """Show the work under way beside the stage."""
        self._show(text)

    def step(self, done: int, total: int, what: str) -> None:
        """Show the item under way and how far along the count it is."""
        self._show(f"{what} ({done}/{total})")

    def seconds_since(self, stage: str) -> float:
        """Seconds since ``stage`` last started (0 when it never did)."""
        started = self.started.get(stage)
        return 0.0 if started is None else time.perf_counter() - started

    def _show(self, detail: str) -> None:
        if self.status is None:
            return
        from deeploy_core.cli.terminal_text import terminal_text

        text = f"{self.title}: {self.current}" + (f" — {detail}" if detail else "")
        self.status.update(terminal_text(text))  # layer and file names come from the model


@contextmanager
def stage_progress(title: str, quiet: bool = False) -> Iterator[StatusLineProgress]:
    """A progress receiver for one command: a spinner on a terminal, silent otherwise or when ``quiet``."""
    if quiet or not (sys.stderr.isatty() or any(os.environ.get(name) for name in FORCING_VARIABLES)):
        yield StatusLineProgress(title)
        return
    from rich.console import Console

    from deeploy_core.cli.terminal_text import terminal_text

    console = Console(stderr=True)
    if not console.is_terminal:
        yield StatusLineProgress(title)
        return
    with console.status(terminal_text(title)) as status:  # ``title`` holds the model's file name
        with stopped_on_interrupt(status.stop):
            yield StatusLineProgress(title, status)


def print_timings(timings: Mapping[str, Mapping[str, float]], quiet: bool,
                  extra: Mapping[str, float] | None = None) -> None:
    """The one-line timing summary on stderr, unless ``quiet``."""
    if not quiet:
        click.echo(timing_summary(timings, extra or {}), err=True)
