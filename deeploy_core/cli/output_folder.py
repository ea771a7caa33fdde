"""Writing into an output folder without ever leaving it half-overwritten."""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from deeploy_core.errors import DeeployError


@contextmanager
def replace_folder(target: Path, force: bool) -> Iterator[Path]:
    """Yield a fresh temporary folder beside ``target``; on success it becomes ``target``.

    An existing non-empty ``target`` is only replaced with ``force``; on any
    error the temporary folder is removed and ``target`` is left as it was.
    """
    target = target.resolve()
    if target.exists() and not target.is_dir():
        raise DeeployError(f"{target} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise DeeployError(f"{target} is not empty; use --force to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    backup = None
    if target.exists():
        backup = target.with_name(f".{target.name}.old")
        shutil.rmtree(backup, ignore_errors=True)
        target.rename(backup)
    staging.rename(target)
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)
