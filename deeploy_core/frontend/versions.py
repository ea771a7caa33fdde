"""The IR version and default-domain opset a model may use.

The oldest opset accepted is ONNX Runtime's oldest (7): every compile is
meant to be checkable against ONNX Runtime, and older exports would go through
version-converter adapters that nothing here can validate.  The newest is the
newest the installed onnx package knows.
"""

from __future__ import annotations

import onnx

from deeploy_core.frontend.errors import ModelImportError

OLDEST_OPSET = 7
"""The oldest default-domain opset accepted (ONNX Runtime's oldest supported opset)."""


def default_opset(model: onnx.ModelProto) -> int:
    """The model's default-domain opset, checked against the supported range."""
    if model.ir_version > onnx.IR_VERSION:
        raise ModelImportError(
            f"the model's IR version {model.ir_version} is newer than the newest this onnx {onnx.__version__} "
            f"reads ({onnx.IR_VERSION})"
        )
    versions = [opset.version for opset in model.opset_import if opset.domain in ("", "ai.onnx")]
    if not versions:
        raise ModelImportError("the model imports no default-domain opset")
    newest = onnx.defs.onnx_opset_version()
    version = versions[0]
    if version < OLDEST_OPSET:
        raise ModelImportError(f"the model uses opset {version}; the oldest supported opset is {OLDEST_OPSET}")
    if version > newest:
        raise ModelImportError(
            f"the model uses opset {version}; the newest this onnx {onnx.__version__} knows is {newest}"
        )
    return version
