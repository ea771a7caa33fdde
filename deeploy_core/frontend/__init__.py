"""The front end: importing ONNX models into a canonical graph."""

from deeploy_core.frontend.importer import CANONICAL_OPSET, ImportedModel, import_model

__all__ = ["CANONICAL_OPSET", "ImportedModel", "import_model"]
