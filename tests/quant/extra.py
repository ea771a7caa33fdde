"""Which of the ``quant`` extra's packages a test module needs, looked up without importing them."""

from __future__ import annotations

import importlib.util

import pytest

LITERT = ("tensorflow", "tf2onnx", "ai_edge_litert")
"""What the Keras -> TFLite -> tf2onnx tests import (in child processes) and LiteRT, their reference."""


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a broken or blocked installation counts as absent
        return True


def needs(*modules: str) -> pytest.MarkDecorator:
    """Skip unless every module is importable, saying which is missing and how to get it."""
    absent = [module for module in modules if _missing(module)]
    return pytest.mark.skipif(bool(absent), reason=f"{', '.join(absent)} not installed: tests/quant needs the "
                                                   f"'quant' extra (make quant)")
