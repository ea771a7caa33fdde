"""How a running deployment says what it is doing.

A compile of a large network spends seconds to minutes inside one stage
(tiling 50 layers, an exact allocator on thousands of buffers).  Without a
sign of life the user cannot tell a slow solve from a hang, so the stages and
the long loops inside them report to a :class:`Progress`.  The receiver
decides what to do with it: the command line shows a status line on a
terminal, a test records the calls, the default drops them.

The deployer receives its receiver through :meth:`StageDriver.deploy
<deeploy_core.deployer.stages.StageDriver.deploy>` and every stage and wrapper
reads it as ``self.progress``; nothing outside the deployment sets it.
"""

from __future__ import annotations

from typing import Callable, Protocol, Union, runtime_checkable


@runtime_checkable
class Progress(Protocol):
    """Receives what a deployment is doing, in order, from the thread that runs it.

    Calls are cheap notifications: a receiver must not raise and should not
    block, since the compile waits for it.
    """

    def stage(self, name: str) -> None:
        """Stage ``name`` (``frontend``, ``lower``, …, or a caller's own such as ``build and run``) starts."""

    def task(self, text: str) -> None:
        """A long piece of work without a count starts inside the stage (``tiling: solving 50 layers``)."""

    def step(self, done: int, total: int, what: str) -> None:
        """Item ``done`` of ``total`` (counted from 1) starts; ``what`` says which (``tiling model: conv_3``)."""


class SilentProgress:
    """The receiver that ignores everything: what a deployment reports to when nobody listens."""

    def stage(self, name: str) -> None:
        """Ignored."""

    def task(self, text: str) -> None:
        """Ignored."""

    def step(self, done: int, total: int, what: str) -> None:
        """Ignored."""


SILENT_PROGRESS = SilentProgress()


class StageCallback(SilentProgress):
    """Adapts a plain ``callback(stage_name)`` (the older interface) to :class:`Progress`: stages only."""

    def __init__(self, callback: Callable[[str], None]) -> None:
        self.callback = callback

    def stage(self, name: str) -> None:
        """Passed on to the callback."""
        self.callback(name)


ProgressLike = Union[Progress, Callable[[str], None], None]
"""What the API accepts: a :class:`Progress`, a stage-name callback, or None for silence."""


def as_progress(progress: ProgressLike) -> Progress:
    """The :class:`Progress` for whatever a caller passed (None: silent)."""
    if progress is None:
        return SILENT_PROGRESS
    if isinstance(progress, Progress):
        return progress
    return StageCallback(progress)
