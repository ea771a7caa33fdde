"""The IR version and default-domain opset a model may use.

The oldest opset compiled is ONNX Runtime's oldest (7): every compile is
meant to be checkable against ONNX Runtime.  Older models (ONNX's own opset-1
node tests, ancient exports) are first lifted to opset 7 by onnx's version
converter when it has adapters for their ops; when it has not, the clear
"oldest supported opset" error stays.  The newest is the newest the installed
onnx package knows.
"""

from __future__ import annotations

import onnx
from onnx import version_converter

from deeploy_core.frontend.diagnosis import first_line
from deeploy_core.frontend.errors import ModelImportError

OLDEST_OPSET = 7
"""The oldest default-domain opset accepted (ONNX Runtime's oldest supported opset)."""

NEWEST_REVIEWED_OPSET = 28
"""The newest opset whose operator changes were reviewed as keeping every older meaning.

Since opset 24 the default domain only widened operators: new element types
(BitShift signed, Celu double/16-bit, Cast int2/float6, ...), edge cases spelt
out (Mod's float special values, BitShift's shifts past the width), and new
attributes whose defaults are the old behaviour (SpaceToDepth ``mode=DCR``,
Attention's windows, Range's ``stash_type`` for 16-bit floats only).  onnx's
version converter has no down-adapters for these versions, so converting such
a model to the canonical opset fails although nothing needs converting: it is
kept at its own opset instead, and the mappers see the same attributes and
types as before (plus any new ones, which they check like any attribute).
"""


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


def _declared_opset(model: onnx.ModelProto) -> int | None:
    versions = [opset.version for opset in model.opset_import if opset.domain in ("", "ai.onnx")]
    return versions[0] if versions else None


def lift_ancient_opset(model: onnx.ModelProto) -> onnx.ModelProto:
    """A model older than :data:`OLDEST_OPSET` converted up to it (else the oldest-opset error)."""
    version = _declared_opset(model)
    if version is None or version >= OLDEST_OPSET:
        return model
    try:
        return version_converter.convert_version(model, OLDEST_OPSET)
    except Exception as error:  # noqa: BLE001 - the converter raises RuntimeError and assertion texts
        reason = first_line(error).rpartition("failed: ")[2]  # drop the C++ assertion's file and line
        raise ModelImportError(
            f"the model uses opset {version}; the oldest supported opset is {OLDEST_OPSET} and onnx's version "
            f"converter cannot lift it there ({reason})"
        ) from None


def conversion_target(source_opset: int, canonical_opset: int) -> int:
    """The opset to convert a model to: its own when it is newer than canonical and reviewed, else canonical."""
    if canonical_opset < source_opset <= NEWEST_REVIEWED_OPSET:
        return source_opset
    return canonical_opset
