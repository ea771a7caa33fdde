"""Which program computes validate's reference outputs: ONNX Runtime on the model, or LiteRT on a ``.tflite`` file.

ONNX Runtime on the compiled model itself is the default (see
:mod:`deeploy_core.validate.reference`).  ``--reference FILE.tflite`` names
the file the model was converted from; LiteRT's reference kernels run it
(:mod:`deeploy_core.validate.litert_reference`).  Golden outputs from an
``.npz`` are the third kind and bypass both.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from deeploy_core.errors import DeeployError
from deeploy_core.network import GeneratedNetwork
from deeploy_core.validate.litert_reference import KERNELS, run_litert_reference
from deeploy_core.validate.reference import run_reference

SUFFIXES = (".tflite",)


def check_reference(reference: Path | None, outputs_npz: Path | None) -> None:
    """Refuse, before compiling, a reference file of an unknown kind or together with golden outputs."""
    if reference is None:
        return
    if outputs_npz is not None:
        raise DeeployError("--reference and --outputs both name the expected outputs: give one of them")
    if reference.suffix.lower() not in SUFFIXES:
        raise DeeployError(f"--reference {reference.name}: not a .tflite file (LiteRT runs .tflite files; "
                           f"ONNX Runtime on the model itself is the default reference)")


def reference_outputs(model_path: Path, reference: Path | None, inputs: dict[str, np.ndarray],
                      generated: GeneratedNetwork) -> list[np.ndarray]:
    """The expected outputs for ``inputs``: LiteRT on ``reference`` when given, else ONNX Runtime on the model."""
    if reference is None:
        return run_reference(model_path, inputs)
    check_reference(reference, None)
    specs = [(spec.name, np.dtype(spec.dtype), tuple(spec.shape)) for spec in generated.outputs]
    return run_litert_reference(reference, inputs, specs)


def describe_reference(reference: Path | None, outputs_npz: Path | None) -> str:
    """What the reference is, for the result table's title."""
    if outputs_npz is not None:
        return "golden"
    if reference is not None:
        return f"{KERNELS} on {reference.name}"
    return "ONNX Runtime"
