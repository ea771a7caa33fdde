"""Running sweep points on dask.distributed: a LocalCluster sized to the machine, or a running scheduler.

Every point is one task (:func:`deeploy_core.sweep.task.run_point`) with its
own retries; the scheduler moves the tasks of a worker that dies to the
others, so a lost worker loses no point.  Results come back to this process,
which alone writes them (:mod:`deeploy_core.sweep.results`).  A task that
still fails after its retries (a worker with other versions, a model missing
on a remote worker, a point that killed workers again and again) is reported
and left out of the file, so that a rerun tries it again.

dask is an optional dependency (the ``sweep`` extra) and is imported only
here, only when a sweep runs.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deeploy_core.errors import DeeployError, printable_line

if TYPE_CHECKING:
    from distributed import Client

    from deeploy_core.sweep.point import SweepPoint

EXTRA = "sweep"
CONNECT_TIMEOUT = "20s"


def require_distributed() -> None:
    """Fail in one line, naming the extra to install, when dask.distributed is missing."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise DeeployError(f"sweep needs dask.distributed, which is not installed: "
                           f"pip install 'deeploy-core[{EXTRA}]'") from None


def machine_workers() -> int:
    """One worker per core this process may run on (compiles are single-threaded Python)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class TaskFailure:
    """A point whose task failed after its retries: nothing is recorded for it."""

    point: SweepPoint
    reason: str


@contextmanager
def dask_client(scheduler: str | None, workers: int | None) -> Iterator[tuple[Client, str]]:
    """A client of ``scheduler`` (left running afterwards) or of a new LocalCluster (closed afterwards), and a
    description of where the work runs."""
    import distributed

    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as error:
            raise DeeployError(f"--scheduler {scheduler}: cannot connect: {printable_line(str(error))}") from None
        try:
            count = len(client.scheduler_info().get("workers", {}))
            yield client, f"{scheduler} ({count} worker{'s' if count != 1 else ''} at the start)"
        finally:
            client.close()
        return
    count = workers or machine_workers()
    cluster = distributed.LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
    try:
        client = distributed.Client(cluster)
        try:
            yield client, f"a local cluster of {count} worker{'s' if count != 1 else ''}"
        finally:
            client.close()
    finally:
        cluster.close()


def run_on_dask(client: Client, tasks: Sequence[tuple[SweepPoint, str]], retries: int,
                on_result: Callable[[SweepPoint, dict[str, Any]], None],
                on_failure: Callable[[TaskFailure], None]) -> None:
    """Submit every task, then hand each outcome to ``on_result`` (or ``on_failure``) as it arrives."""
    import distributed

    from deeploy_core.sweep.task import run_point

    futures = {client.submit(run_point, text, key=f"deeploy-sweep-{point.key}", retries=retries): point
               for point, text in tasks}
    for future in distributed.as_completed(list(futures)):
        point = futures.pop(future)
        try:
            text = future.result()
        except Exception as error:  # noqa: BLE001 - the task's own failure, after its retries, ends this point only
            on_failure(TaskFailure(point, printable_line(f"{type(error).__name__}: {error}")))
        else:
            on_result(point, json.loads(text))
        finally:
            future.release()
