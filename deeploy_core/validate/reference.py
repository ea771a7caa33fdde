"""ONNX Runtime as the reference (graph optimisations off: its fused kernels round differently).

The one exception is ONNX Runtime's QDQ fusion of Conv, MatMul and Gemm,
which is applied to the model beforehand (:mod:`deeploy_core.lowering.qdq_reference`):
those layers then run as its QLinear kernels, as exact mode computes them.
"""

from __future__ import annotations

from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np
import onnx

from deeploy_core.errors import DeeployError
from deeploy_core.lowering.qdq_reference import fused_qdq_model
from deeploy_core.validate.qonnx_reference import has_qonnx_ops, standard_model

if TYPE_CHECKING:  # imported where a session is made: compile and analyze never run the reference
    import onnxruntime as ort


def reference_session(model: Path | bytes) -> ort.InferenceSession:
    """An ONNX Runtime CPU session for ``model`` (a file or serialised bytes): no graph optimisations, one thread."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model if isinstance(model, bytes) else str(model), options,
                                providers=["CPUExecutionProvider"])


ORT_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml", "com.microsoft"})
"""Operator domains ONNX Runtime's CPU provider has kernels for (QONNX's are lowered before it runs)."""
GOLDEN_HINT = "give the expected outputs with --outputs golden.npz"


class ReferenceUnavailable(DeeployError):
    """ONNX Runtime cannot run the network, so only expected outputs the user gives can judge it."""


def run_reference(model_path: Path, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The model's outputs for ``inputs`` as computed by ONNX Runtime on the CPU.

    A network ONNX Runtime cannot load (Deeploy's integer dialect: ``RequantShift``, ``iSoftmax``, … in the
    default domain) raises :class:`ReferenceUnavailable` naming those ops instead of ONNX Runtime's dump.
    """
    try:
        session = _fused_session(model_path) or reference_session(_standard_bytes(model_path) or model_path)
        return [np.asarray(value) for value in session.run(None, inputs)]
    except Exception as error:  # noqa: BLE001 - ORT raises its own exception types
        unknown = ops_onnx_runtime_lacks(onnx.load(str(model_path), load_external_data=False))
        if unknown:
            raise ReferenceUnavailable(
                f"ONNX Runtime cannot run this network: it has no kernel for {', '.join(unknown)} "
                f"(ops outside ONNX, such as Deeploy's integer dialect); {GOLDEN_HINT}") from None
        raise ReferenceUnavailable(f"ONNX Runtime cannot run the reference model ({str(error).splitlines()[0]}); "
                                   f"{GOLDEN_HINT}") from error


def ops_onnx_runtime_lacks(model: onnx.ModelProto) -> list[str]:
    """The model's op types (sorted, each once) that are no operator of a domain ONNX Runtime implements."""
    unknown = set()
    for node in model.graph.node:
        domain = node.domain or ""
        if domain not in ORT_DOMAINS or (domain in ("", "ai.onnx") and not onnx.defs.has(node.op_type)):
            unknown.add(node.op_type if domain in ("", "ai.onnx") else f"{domain}.{node.op_type}")
    return sorted(unknown)


def _standard_bytes(model_path: Path) -> bytes | None:
    """A QONNX model lowered to standard ONNX (see :mod:`~deeploy_core.validate.qonnx_reference`), else None."""
    model = onnx.load(str(model_path))
    return standard_model(model).SerializeToString() if has_qonnx_ops(model) else None


def _fused_session(model_path: Path) -> ort.InferenceSession | None:
    """A session of the model with its QDQ islands fused, or None when it has none or ONNX Runtime has no kernel.

    (ONNX Runtime's own optimiser leaves an island unfused when it lacks the
    kernel for its types; so does the reference.)
    """
    fused = fused_qdq_model(standard_model(onnx.load(str(model_path))))
    if fused is None:
        return None
    try:
        return reference_session(fused.SerializeToString())
    except Exception:  # noqa: BLE001 - ORT raises its own exception types
        return None
