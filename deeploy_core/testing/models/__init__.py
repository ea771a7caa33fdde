"""Small float32 networks built with onnx.helper, used by the conformance suites."""

from deeploy_core.testing.models.catalogue import CONFORMANCE_MODELS, conformance_model

__all__ = ["CONFORMANCE_MODELS", "conformance_model"]
