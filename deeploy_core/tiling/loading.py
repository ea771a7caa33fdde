"""Reading back the tiling solution and memory map that an earlier compile wrote into ``report.json``.

A report is read through :func:`~deeploy_core.report.migration.upgrade_report`, so one written before a key was
renamed is reused like a new one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deeploy_core.errors import DeeployError
from deeploy_core.report.migration import upgrade_report
from deeploy_core.tiling.solution import TilingSolution


def load_tiling(path: Path) -> tuple[TilingSolution, dict[str, dict[str, int]]]:
    """(solution, memory map) from a ``report.json`` (plain JSON: nothing is executed)."""
    try:
        report: Any = _read_report(path)
        tiling = report["tiling"]
        memory_map = {str(layer): {str(k): int(v) for k, v in blocks.items()} for layer, blocks in tiling["memory_map"].items()}
        return TilingSolution.from_json(tiling["solution"]), memory_map
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as error:
        raise DeeployError(f"{path}: no tiling solution to reuse ({type(error).__name__}: {error})") from None


def tiler_of_report(path: Path) -> str | None:
    """The tiler an earlier compile used, as its ``report.json`` names it (None if it names none)."""
    try:
        report: Any = _read_report(path)
        tiler = report["tiling"].get("tiler")
    except (OSError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as error:
        raise DeeployError(f"{path}: no tiling solution to reuse ({type(error).__name__}: {error})") from None
    return tiler if isinstance(tiler, str) and tiler else None


def _read_report(path: Path) -> Any:
    """The report at ``path`` with today's key names (plain JSON: nothing is executed)."""
    return upgrade_report(json.loads(Path(path).read_text(encoding="utf-8")))
