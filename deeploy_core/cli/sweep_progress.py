"""The sweep's progress on stderr: a rich bar on a terminal (points done / total, failures), one line per point
in a log, nothing with ``--quiet``.  rich is imported only when the bar is drawn."""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any

import click

from deeploy_core.cli.progress import FORCING_VARIABLES
from deeploy_core.errors import printable_line

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

STATUSES = ("ok", "infeasible", "error")


class SweepProgress:
    """Counts outcomes and shows them as they arrive."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total = total
        self.quiet = quiet
        self.counts = dict.fromkeys(STATUSES, 0)
        self.unfinished = 0
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    @property
    def done(self) -> int:
        return sum(self.counts.values()) + self.unfinished

    def _failures(self) -> str:
        text = f"{self.counts['infeasible']} infeasible, {self.counts['error']} error"
        return text + (f", {self.unfinished} unfinished" if self.unfinished else "")

    def __enter__(self) -> SweepProgress:
        if self.quiet or self.total == 0:
            return self
        if not (sys.stderr.isatty() or any(os.environ.get(name) for name in FORCING_VARIABLES)):
            return self
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        if not console.is_terminal:
            return self
        self._bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failures]}"),
                             TimeElapsedColumn(), console=console, transient=False)
        self._bar.start()
        self._task = self._bar.add_task("sweep", total=self.total, failures=self._failures())
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()

    def _show(self, line: str, failed: bool) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self.done, failures=self._failures())
            if failed:
                self._bar.console.print(line, markup=False, highlight=False)
        elif not self.quiet:
            click.echo(f"[{self.done}/{self.total}] {line}", err=True)

    def point(self, label: str, record: dict[str, Any]) -> None:
        """A point finished with a result (ok, infeasible or error)."""
        status = str(record["status"])
        self.counts[status] = self.counts.get(status, 0) + 1
        message = f": {record['message']}" if record.get("message") else ""
        self._show(printable_line(f"{label}: {status}{message}"), status != "ok")

    def unfinished_point(self, label: str, reason: str) -> None:
        """A point's task failed after its retries (nothing recorded)."""
        self.unfinished += 1
        self._show(printable_line(f"{label}: not finished ({reason})"), True)
