"""Input and reference data for validation.

Peer-test ``.npz`` files bind arrays to graph inputs by position (extras are
ignored); ``np.load`` is always called with ``allow_pickle=False``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx

from deeploy_core.errors import DeeployError
from deeploy_core.ir.dtypes import DataType, from_onnx
from deeploy_core.lowering.integer_types import deeploy_input_type
from deeploy_core.validate.token_inputs import IntegerDraw


def graph_input_specs(model: onnx.ModelProto) -> list[tuple[str, np.dtype, tuple[int, ...]]]:
    """(name, dtype, shape) of every graph input that is not an initializer, in order."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor_type = value.type.tensor_type
        shape = tuple(dim.dim_value for dim in tensor_type.shape.dim)
        specs.append((value.name, from_onnx(tensor_type.elem_type).numpy, shape))
    return specs


def load_npz_by_position(path: Path, count: int | None = None) -> list[np.ndarray]:
    """The arrays of an ``.npz`` file in stored order (the first ``count`` if given)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = [archive[key] for key in archive.files]
    except (OSError, ValueError) as error:
        raise DeeployError(f"{path}: cannot read arrays ({error})") from error
    if count is not None:
        if len(arrays) < count:
            raise DeeployError(f"{path}: holds {len(arrays)} arrays, the model needs {count}")
        arrays = arrays[:count]
    return arrays


def bind_inputs(
    specs: list[tuple[str, np.dtype, tuple[int, ...]]], arrays: list[np.ndarray]
) -> dict[str, np.ndarray]:
    """Arrays cast to the declared input types and shapes, keyed by input name."""
    bound = {}
    for (name, dtype, shape), array in zip(specs, arrays):
        if array.size != int(np.prod(shape, dtype=np.int64)):
            raise DeeployError(f"input {name!r}: {array.size} values given, shape {list(shape)} needs {int(np.prod(shape))}")
        bound[name] = np.ascontiguousarray(array.reshape(shape).astype(dtype))
    return bound


def random_inputs(specs: list[tuple[str, np.dtype, tuple[int, ...]]], seed: int = 0,
                  value_types: dict[str, DataType] | None = None,
                  integer_draws: Mapping[str, IntegerDraw] | None = None) -> dict[str, np.ndarray]:
    """Deterministic sample inputs: standard normal floats, small integers.

    ``value_types`` names inputs whose values must fit another element type
    than the declared one (a float-declared input the compiler reads as int8):
    they get whole numbers over that type's range (at most ±1000 for wide types),
    stored in the declared dtype.  ``integer_draws`` names integer inputs that
    index an embedding or mask (:mod:`deeploy_core.validate.token_inputs`).
    """
    generator = np.random.default_rng(seed)
    inputs = {}
    for name, dtype, shape in specs:
        value_type = (value_types or {}).get(name)
        integer_draw = (integer_draws or {}).get(name)
        if value_type is not None and not value_type.is_float:
            low = -(2 ** (value_type.bits - 1)) if value_type.signed else 0
            high = 2 ** (value_type.bits - 1) - 1 if value_type.signed else 2 ** value_type.bits - 1
            inputs[name] = generator.integers(max(low, -1000), min(high, 1000) + 1, shape).astype(dtype)
        elif integer_draw is not None and not np.issubdtype(dtype, np.floating):
            inputs[name] = integer_draw.draw(generator, shape, dtype)
        elif np.issubdtype(dtype, np.floating):
            inputs[name] = generator.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            inputs[name] = generator.integers(0, 2, shape).astype(dtype)
        else:
            info = np.iinfo(dtype)
            inputs[name] = generator.integers(max(info.min, -10), min(info.max, 10) + 1, shape).astype(dtype)
    return inputs


def input_types_from_data(model: onnx.ModelProto, data: Path) -> dict[str, DataType]:
    """Deeploy's rule for sample data (the narrowest integer type holding each array's range, unsigned first,
    float32 otherwise) applied to the arrays of ``data`` bound to the model's inputs by position."""
    specs = graph_input_specs(model)
    arrays = load_npz_by_position(data, len(specs))
    return {name: deeploy_input_type(array) for (name, _, _), array in zip(specs, arrays)}
