"""Compiling for batch 1 when an input's first dimension is dynamic.

Keras declares every input with batch ``None``, and its converters (tf2onnx,
``tf.lite``) carry it into the ONNX file as a named dynamic first dimension
(``['unk__267', 96, 96, 3]``).  A microcontroller deployment always runs one
sample at a time, so asking every such user for ``--input-shape`` only adds a
step; the importer fixes that dimension to 1 and says so in one notice line
per input.  Only the first dimension of an input of rank 2 or more is taken
for a batch: a dynamic dimension anywhere else (a sequence length, an image
size) or the only dimension of a vector still needs ``--input-shape``, and
the importer's error says so.
"""

from __future__ import annotations

from collections.abc import Collection

import onnx

NOTICE_PREFIX = "notice: "
"""Warnings that start with it are informational: the CLI prints them as they are, not as ``warning:``."""


def _is_dynamic(dim: onnx.TensorShapeProto.Dimension) -> bool:
    """Named (``'unk__267'``, ``'batch'``) or left blank; a declared 0 or negative size stays an error."""
    return not dim.HasField("dim_value")


def fix_dynamic_batch(model: onnx.ModelProto, given: Collection[str] = ()) -> list[str]:
    """Set a dynamic first dimension of each graph input not in ``given`` to 1; one notice line per input changed.

    ``given`` names the inputs whose shape ``--input-shape`` sets (they are
    left alone, and no notice is given for them).
    """
    initializers = {tensor.name for tensor in model.graph.initializer}
    notices: list[str] = []
    for value in model.graph.input:
        if value.name in initializers or value.name in given or not value.type.HasField("tensor_type"):
            continue
        tensor_type = value.type.tensor_type
        if not tensor_type.HasField("shape") or len(tensor_type.shape.dim) < 2:
            continue
        first = tensor_type.shape.dim[0]
        if not _is_dynamic(first):
            continue
        named = f" {first.dim_param!r}" if first.HasField("dim_param") and first.dim_param else ""
        first.Clear()
        first.dim_value = 1
        notices.append(f"{NOTICE_PREFIX}input {value.name!r} has a dynamic batch dimension{named}: compiling for "
                       "batch 1 (--input-shape sets another)")
    return notices

