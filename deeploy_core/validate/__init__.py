"""Validation: build generated code, run it, compare with ONNX Runtime or golden outputs."""

from deeploy_core.validate.build import BuildError, Toolchain, build_executable
from deeploy_core.validate.compare import OutputComparison, compare_output
from deeploy_core.validate.run import ValidationResult, compare_outputs, run_network, run_profiled

__all__ = [
    "BuildError",
    "OutputComparison",
    "Toolchain",
    "ValidationResult",
    "build_executable",
    "compare_output",
    "compare_outputs",
    "run_network",
    "run_profiled",
]
