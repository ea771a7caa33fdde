"""A deliberately wrong ``.tflite``: the same network with one weight tensor negated.

Tests of ``validate --reference MODEL.tflite`` need a file whose inputs and
outputs match the compiled model's in shape and type but whose values do
not: validate must then fail, which shows that LiteRT's outputs on that file,
not ONNX Runtime's on the model, are what it compares.

The file is rewritten by TensorFlow's flatbuffer tools in a child process:
importing TensorFlow beside ONNX Runtime and LiteRT can crash the process
(bench/quant_table.py did, with a segmentation fault).

Only :mod:`tests.support.litert_reference_effect` uses it, so it lives here, not in the installed
:mod:`deeploy_core.testing`; the child process runs this file by its path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

_INT8 = 9  # tflite's TensorType.INT8


def with_negated_weights(source: Path, target: Path) -> Path:
    """Write ``source`` to ``target`` with its largest int8 constant tensor negated (saturating at 127)."""
    result = subprocess.run([sys.executable, __file__, str(source), str(target)], capture_output=True, text=True,
                            timeout=300, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-10:])
        raise RuntimeError(f"{source}: negating a weight tensor failed (exit {result.returncode}):\n{tail}")
    return target


def _negate(source: Path, target: Path) -> None:
    """(In the child process.)"""
    from tensorflow.lite.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model(str(source))
    constants = [model.buffers[tensor.buffer] for tensor in model.subgraphs[0].tensors
                 if tensor.type == _INT8 and model.buffers[tensor.buffer].data is not None]
    if not constants:
        raise ValueError(f"{source}: no int8 constant tensor to change")
    buffer = max(constants, key=lambda candidate: len(candidate.data))
    values = np.asarray(buffer.data, dtype=np.uint8).view(np.int8).astype(np.int16)
    buffer.data = np.clip(-values, -128, 127).astype(np.int8).view(np.uint8)
    flatbuffer_utils.write_model(model, str(target))


if __name__ == "__main__":  # the child process of with_negated_weights: SOURCE TARGET
    _negate(Path(sys.argv[1]), Path(sys.argv[2]))
