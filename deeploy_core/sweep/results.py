"""``results.jsonl``: one JSON record per finished point, written by the client alone, one line at a time.

Each line is written whole with one ``write`` on a file opened for appending,
then flushed and ``fsync``-ed before the next point is counted as done: after
a crash the file holds every point reported done, plus at most one torn line
at its end.  Reading ignores that torn line (a last line without its newline),
and opening for appending cuts it off first, so the file stays a sequence of
whole lines.  Any other line that is not a JSON record is corruption and is
reported rather than guessed at.  While a sweep appends, it holds an exclusive
lock on the file, so that two sweeps into one folder cannot interleave.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from deeploy_core.errors import DeeployError

RESULTS_FILE = "results.jsonl"


@dataclass
class StoredResults:
    """What a results file holds: records by key (the first of a key wins) and whether its last line was torn."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    complete_bytes: int = 0
    """Length of the file up to and including its last newline."""
    torn_bytes: int = 0


def read_results(path: Path) -> StoredResults:
    """The records of ``path`` (none when it does not exist); a torn last line is ignored."""
    if not path.exists():
        return StoredResults()
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    stored = StoredResults(complete_bytes=end, torn_bytes=len(data) - end)
    for number, line in enumerate(data[:end].split(b"\n")[:-1], start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("key"), str):
            raise DeeployError(f"{path}: line {number} is not a sweep record; move the file away or remove the line")
        stored.records.setdefault(record["key"], record)
    return stored


class ResultsWriter:
    """Appends records to ``path``, each durable before :meth:`append` returns (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[bytes] | None = None

    def __enter__(self) -> ResultsWriter:
        stored = read_results(self.path)
        handle = self.path.open("ab")
        try:
            _lock(handle, self.path)
            if stored.torn_bytes:  # the torn line of an interrupted run: cut, so the next line starts clean
                handle.truncate(stored.complete_bytes)
                os.fsync(handle.fileno())
        except BaseException:
            handle.close()
            raise
        self._handle = handle
        return self

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as one line, then flush and fsync."""
        assert self._handle is not None, "append() outside the with block"
        self._handle.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._handle is not None:
            self._handle.close()  # closing releases the lock
            self._handle = None


def _lock(handle: IO[bytes], path: Path) -> None:
    try:
        import fcntl
    except ImportError:  # not a POSIX system: no lock, one sweep per folder is then the user's to keep
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise DeeployError(f"{path}: another sweep is writing this file; wait for it or use another -o folder") \
            from None
