"""The folder a page's commands run in: what a reader has after the steps of docs/install.rst.

Pages name ``model.onnx`` (the example network, ``examples/make_tiny_cnn.py``),
``in.npz`` and ``golden.npz`` (inputs and ONNX Runtime's outputs for them),
and paths of the checkout (``examples/``, ``bench/``, ``plugins/``) as seen
from its root.  Each command or session gets a fresh folder holding copies of
the data files (a page may overwrite them) and links to those checkout
folders, so that nothing a command writes lands in the checkout.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx

from deeploy_core.validate.reference import run_reference
from tests.docs.doc_blocks import REPO

CHECKOUT_FOLDERS = ("examples", "bench", "plugins")
MODEL = "model.onnx"
INPUTS = "in.npz"
GOLDEN = "golden.npz"


def tiny_cnn() -> onnx.ModelProto:
    """The example network, made by the same function ``examples/make_tiny_cnn.py`` runs."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_tiny_cnn", REPO / "examples" / "make_tiny_cnn.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.tiny_cnn()  # type: ignore[no-any-return]


def write_data(folder: Path) -> dict[str, np.ndarray]:
    """Write the example network, seeded inputs and ONNX Runtime's outputs into ``folder``; return the inputs."""
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(tiny_cnn(), folder / MODEL)
    rng = np.random.default_rng(7)
    inputs = {"input": rng.standard_normal((1, 3, 32, 32)).astype(np.float32)}
    np.savez(folder / INPUTS, **inputs)
    outputs = run_reference(folder / MODEL, inputs)
    np.savez(folder / GOLDEN, *outputs)
    return inputs


def fresh_workspace(data: Path, folder: Path) -> Path:
    """A new working folder: copies of the data files in ``data``, links to the checkout's example folders."""
    folder.mkdir(parents=True)
    for name in (MODEL, INPUTS, GOLDEN):
        shutil.copyfile(data / name, folder / name)
    for name in CHECKOUT_FOLDERS:
        (folder / name).symlink_to(REPO / name, target_is_directory=True)
    return folder
