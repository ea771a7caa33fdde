"""OR-tools' CP-SAT Python layer, imported without pandas.

``ortools.sat.python.cp_model`` imports pandas at module level, yet pandas is
used only by its ``*_series`` helpers and in type annotations; the tiler and
the CP allocators never call those.  Importing pandas cost a tiled compile
about 0.2 s — more than the solve on most networks (issue 21: "no pandas at
all if it can be avoided").

:func:`cp_model_module` imports ``cp_model`` with a stand-in registered as
``pandas`` for the duration of that import only (its attributes are
placeholder classes, enough for the annotations evaluated at import), then
points the module's ``pd`` at a proxy that imports the real pandas on first
use.  So nothing of cp_model is lost: a caller of the series helpers gets real
pandas, at the moment it is needed.  If pandas or cp_model is already loaded,
the ordinary import is used.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

CP_MODEL = "ortools.sat.python.cp_model"


class PandasPlaceholder:
    """Stands for a pandas class in cp_model's import-time annotations; never instantiated."""


class PandasStandIn(ModuleType):
    """``pandas`` while cp_model is being imported: every attribute is :class:`PandasPlaceholder`."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return PandasPlaceholder


class PandasOnDemand(ModuleType):
    """cp_model's ``pd`` after the import: the real pandas, imported by the first attribute read."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("pandas"), name)


def cp_model_module() -> ModuleType:
    """``ortools.sat.python.cp_model``, imported without importing pandas."""
    if CP_MODEL in sys.modules or "pandas" in sys.modules:
        return importlib.import_module(CP_MODEL)
    stand_in = PandasStandIn("pandas")
    sys.modules["pandas"] = stand_in
    try:
        module = importlib.import_module(CP_MODEL)
    finally:
        if sys.modules.get("pandas") is stand_in:
            del sys.modules["pandas"]
    if getattr(module, "pd", None) is stand_in:
        module.pd = PandasOnDemand("pandas")  # type: ignore[attr-defined]
    return module
