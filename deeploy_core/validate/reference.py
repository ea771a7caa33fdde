"""ONNX Runtime as the reference (graph optimisations off: its fused kernels round differently)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort

from deeploy_core.errors import DeeployError


def run_reference(model_path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The model's outputs for ``inputs`` as computed by ONNX Runtime on the CPU."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        return [np.asarray(value) for value in session.run(None, inputs)]
    except Exception as error:  # noqa: BLE001 - ORT raises its own exception types
        raise DeeployError(f"ONNX Runtime cannot run the reference model: {str(error).splitlines()[0]}") from error
