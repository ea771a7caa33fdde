"""Import torchvision on a machine where its compiled operators cannot load.

PyPI has no CPU build of torchvision: its wheel's ``_C.so`` links against
CUDA libraries that a CPU-only torch does not ship, so the extension fails to
load (torchvision tolerates that) and then ``import torchvision`` still stops,
because it registers fake kernels for ``torchvision::nms`` and
``torchvision::qnms`` unconditionally.  Declaring those two operator schemas
(without any kernel) first lets the import finish; model construction and
ONNX export never call them (they serve detection heads only).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor qdets, Tensor qscores, float iou_threshold) -> Tensor",
)
_library: object | None = None
"""The ``torch.library.Library`` holding the schemas: it must stay alive, or torch drops them."""


def import_torchvision() -> ModuleType:
    """``import torchvision``; if it stops on the missing operators, declare their schemas and import again."""
    global _library
    try:
        return importlib.import_module("torchvision")
    except RuntimeError as error:
        if "torchvision::" not in str(error) or _library is not None:
            raise
    import torch

    for name in [name for name in sys.modules if name == "torchvision" or name.startswith("torchvision.")]:
        del sys.modules[name]  # the half-finished first import
    library = torch.library.Library("torchvision", "DEF")
    for schema in _SCHEMAS:
        library.define(schema)
    _library = library
    return importlib.import_module("torchvision")
