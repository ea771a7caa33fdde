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


def placeholder_attribute(name: str) -> Any:
    """Module ``__getattr__`` (PEP 562) of the stand-in: every public attribute is :class:`PandasPlaceholder`."""
    if name.startswith("__"):
        raise AttributeError(name)
    return PandasPlaceholder


def real_pandas_attribute(name: str) -> Any:
    """Module ``__getattr__`` of cp_model's ``pd`` after the import: the real pandas, loaded on first read."""
    return getattr(importlib.import_module("pandas"), name)


def module_with_getattr(name: str, getattr_function: Any) -> ModuleType:
    """An empty module whose every attribute read goes to ``getattr_function`` (PEP 562)."""
    module = ModuleType(name)
    module.__getattr__ = getattr_function  # type: ignore[method-assign]
    return module


def cp_model_module() -> ModuleType:
    """``ortools.sat.python.cp_model``, imported without importing pandas."""
    if CP_MODEL in sys.modules or "pandas" in sys.modules:
        return importlib.import_module(CP_MODEL)
    stand_in = module_with_getattr("pandas", placeholder_attribute)
    sys.modules["pandas"] = stand_in
    try:
        module = importlib.import_module(CP_MODEL)
    finally:
        if sys.modules.get("pandas") is stand_in:
            del sys.modules["pandas"]
    if getattr(module, "pd", None) is stand_in:
        module.pd = module_with_getattr("pandas", real_pandas_attribute)  # type: ignore[attr-defined]
    return module
