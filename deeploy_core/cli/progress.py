"""Progress on stderr while the long steps run (silent when stderr is not a terminal)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console

from deeploy_core.cli.terminal_text import terminal_text


@contextmanager
def stage_progress(what: str) -> Iterator[Callable[[str], None]]:
    """A callback that shows ``what: <stage>`` in a spinner."""
    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda stage: None
        return
    with console.status(terminal_text(what)) as status:  # ``what`` holds the model's file name
        yield lambda stage: status.update(terminal_text(f"{what}: {stage}"))
