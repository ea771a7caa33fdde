"""Writing into an output folder without ever leaving it half-overwritten.

The files are written into a staging folder beside the target
(``.<name>.staging-<pid>-<random>``), which replaces the target only when
everything succeeded.  An error or an interrupt removes the staging folder; a
process killed outright (SIGKILL, power loss) cannot, so the next compile into
the same target removes staging folders whose process is gone, and restores an
old output that a kill caught in the middle of the swap.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from deeploy_core.errors import DeeployError
from deeploy_core.temporary_paths import commit_guard, register, unregister


def _staging_prefix(target: Path) -> str:
    return f".{target.name}.staging-"


def _backup_of(target: Path) -> Path:
    return target.with_name(f".{target.name}.old")


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_staging(target: Path) -> list[Path]:
    """Staging folders of ``target`` left by processes that no longer run (removed); returns them."""
    pattern = re.compile(re.escape(_staging_prefix(target)) + r"(\d+)-")
    stale: list[Path] = []
    if not target.parent.is_dir():
        return stale
    for entry in sorted(target.parent.iterdir()):
        found = pattern.match(entry.name)
        if found and entry.is_dir() and not entry.is_symlink() and int(found.group(1)) != os.getpid() \
                and not _process_alive(int(found.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
            stale.append(entry)
    return stale


def _recover_interrupted_swap(target: Path) -> None:
    """A kill between the two renames of a swap leaves the old output as the backup: put it back."""
    backup = _backup_of(target)
    if backup.is_dir() and not backup.is_symlink():
        if target.exists():
            shutil.rmtree(backup, ignore_errors=True)
        else:
            backup.rename(target)


@contextmanager
def replace_folder(target: Path, force: bool) -> Iterator[Path]:
    """Yield a fresh staging folder beside ``target``; on success it becomes ``target``.

    An existing non-empty ``target`` is only replaced with ``force``; on any
    error or interrupt the staging folder is removed and ``target`` is left as
    it was.
    """
    target = target.resolve()
    _recover_interrupted_swap(target)
    if target.exists() and not target.is_dir():
        raise DeeployError(f"{target} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise DeeployError(f"{target} is not empty; use --force to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(target)
    staging = Path(tempfile.mkdtemp(prefix=f"{_staging_prefix(target)}{os.getpid()}-", dir=target.parent))
    register(staging)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        unregister(staging)
        raise
    with commit_guard():
        backup = None
        if target.exists():
            backup = _backup_of(target)
            shutil.rmtree(backup, ignore_errors=True)
            target.rename(backup)
        staging.rename(target)
        if backup is not None:
            shutil.rmtree(backup, ignore_errors=True)
    unregister(staging)
