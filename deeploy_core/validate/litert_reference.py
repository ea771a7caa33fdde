"""LiteRT (TensorFlow Lite's interpreter) as the reference: ``validate --reference MODEL.tflite``.

A model converted from a ``.tflite`` file by tf2onnx is only as right as
what LiteRT computes on the original file, and ``--quantization fixed-point``
promises TFLite's integer arithmetic.  So the reference runs the ``.tflite``
itself, on the same inputs, with LiteRT's *reference* kernels
(``OpResolverType.BUILTIN_REF``): its default kernels (XNNPACK, and the
optimised built-ins) round differently in places, up to two steps on
ResNet-8, and are not the arithmetic the fixed-point mode reproduces.

Inputs and outputs are matched by position; each must have the shape and
element type of the compiled model's, or the reference is refused with a
line saying which differs.  ``ai-edge-litert`` is optional (the ``quant``
extra); without it, asking for this reference is a one-line error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from deeploy_core.errors import DeeployError

KERNELS = "LiteRT reference kernels (BUILTIN_REF)"
MISSING = "ai-edge-litert is not installed: --reference MODEL.tflite needs the quant extra (pip install -e '.[quant]')"


def _interpreter(path: Path) -> Any:
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError as error:
        raise DeeployError(MISSING) from error
    try:
        interpreter = Interpreter(model_path=str(path), num_threads=1,
                                  experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        interpreter.allocate_tensors()
    except (ValueError, RuntimeError) as error:
        raise DeeployError(f"{path}: LiteRT cannot load it: {str(error).strip().splitlines()[0]}") from error
    return interpreter


def _check(kind: str, index: int, name: str, expected_shape: tuple[int, ...], expected_dtype: np.dtype,
           detail: dict[str, Any], path: Path) -> None:
    shape, dtype = tuple(int(d) for d in detail["shape"]), np.dtype(detail["dtype"])
    if shape != expected_shape or dtype != expected_dtype:
        raise DeeployError(
            f"{path.name}: {kind} {index} ({detail['name']!r}) is {dtype} {list(shape)}, the model's {kind} {name!r} "
            f"is {expected_dtype} {list(expected_shape)}: the reference must be the same network (matched by position)")


def run_litert_reference(path: Path, inputs: dict[str, np.ndarray],
                         output_specs: Sequence[tuple[str, np.dtype, tuple[int, ...]]]) -> list[np.ndarray]:
    """The outputs LiteRT's reference kernels compute for ``inputs`` (the model's, in order) on the ``.tflite``.

    ``output_specs`` are the compiled model's outputs (name, dtype, shape), in
    order, which the file's outputs must match.
    """
    interpreter = _interpreter(path)
    input_details = interpreter.get_input_details()
    output_details = interpreter.get_output_details()
    if len(input_details) != len(inputs) or len(output_details) != len(output_specs):
        raise DeeployError(
            f"{path.name}: {len(input_details)} inputs and {len(output_details)} outputs, the model has {len(inputs)} "
            f"and {len(output_specs)}: the reference must be the same network")
    for index, ((name, array), detail) in enumerate(zip(inputs.items(), input_details)):
        _check("input", index, name, tuple(array.shape), array.dtype, detail, path)
        interpreter.set_tensor(detail["index"], array)
    for index, ((name, dtype, shape), detail) in enumerate(zip(output_specs, output_details)):
        _check("output", index, name, tuple(shape), np.dtype(dtype), detail, path)
    try:
        interpreter.invoke()
    except RuntimeError as error:
        raise DeeployError(f"{path.name}: LiteRT failed to run it: {str(error).strip().splitlines()[0]}") from error
    return [np.array(interpreter.get_tensor(detail["index"])) for detail in output_details]
