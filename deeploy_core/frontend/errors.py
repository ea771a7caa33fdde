"""Errors raised while importing a model."""

from deeploy_core.errors import DeeployError


class ModelImportError(DeeployError):
    """The model file cannot be read, is not valid ONNX, or has shapes the compiler cannot fix."""
