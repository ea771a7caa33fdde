"""The example network of the README and the docs (``examples/make_tiny_cnn.py``), for tests that compile it.

Several test modules run the command line on this small float32 CNN; they get it through the ``tiny_cnn``
fixture of ``tests/conftest.py``, which writes it from here, instead of taking the fixture from one another.
The model is built by the example script's own function, so the tests compile exactly what the docs show.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import onnx

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "make_tiny_cnn.py"


def tiny_cnn_model() -> onnx.ModelProto:
    """The example model, made by ``tiny_cnn()`` of ``examples/make_tiny_cnn.py``."""
    spec = importlib.util.spec_from_file_location("make_tiny_cnn", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model: onnx.ModelProto = module.tiny_cnn()
    return model


def write_tiny_cnn(path: Path) -> Path:
    """Save the example model as ``path`` and return it."""
    onnx.save(tiny_cnn_model(), path)
    return path
