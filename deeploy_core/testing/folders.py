"""An output folder's contents as data, for tests that compare two compiles.

An output folder holds subfolders (``runtime/src``, ``selftest``), so a
comparison of its top-level files alone would miss a difference in the
copied runtime or the self-test; every file is read, by its path relative
to the folder.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path


def folder_files(folder: Path, leave_out: Collection[str] = ()) -> dict[str, bytes]:
    """Every file under ``folder`` by relative POSIX path (sorted), except the paths in ``leave_out``;
    empty when ``folder`` does not exist."""
    if not folder.is_dir():
        return {}
    files = (path for path in sorted(folder.rglob("*")) if path.is_file())
    return {relative: path.read_bytes() for path in files
            if (relative := path.relative_to(folder).as_posix()) not in leave_out}
