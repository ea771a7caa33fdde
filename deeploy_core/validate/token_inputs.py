"""Random test data for integer graph inputs that index or mask: token ids within the embedding, masks of 0/1.

A transformer's ``input_ids`` index an embedding table (a ``Gather``) and its
``attention_mask`` holds 0/1.  Small random integers of either sign, what
``validate`` draws for other integer inputs, are wrong for both: a negative
or too large id reads outside the table (ONNX Runtime refuses it; PyTorch
never emits one), and a mask of 7 or -3 is no mask.  The model itself says
which inputs these are, so ``validate`` needs no flag:

- an input whose values reach the indices of a ``Gather`` (through casts and
  shape-only ops) is drawn from ``[0, n)``, with ``n`` the smallest gathered
  dimension among such Gathers;
- an input named like a mask, or whose values reach a boolean (a ``Cast`` to
  bool, the condition of ``Where``, ``Not``/``And``/``Or``/``Xor``), holds a
  padding mask: ones for a random length of at least one position along the
  last axis, zeros after it (a real tokenizer's mask; a row with no valid
  position at all is a degenerate softmax that runtimes resolve differently).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import onnx

PASS_THROUGH = frozenset({
    "Cast", "Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Expand", "Slice", "Transpose", "Tile",
    "Concat",
})
"""Ops whose output holds (a rearrangement of) its data input's values: an index or a mask stays one through them."""
BOOLEAN_USES = frozenset({"Not", "And", "Or", "Xor"})


@dataclass(frozen=True)
class IntegerDraw:
    """How to draw one integer input: ids in ``[0, bound)``, or a padding mask when ``mask``."""

    bound: int | None = None
    mask: bool = False

    def draw(self, generator: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        if self.mask:
            rows = int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1
            width = shape[-1] if shape else 1
            lengths = generator.integers(1, width + 1, rows)
            mask = np.arange(width)[None, :] < lengths[:, None]
            return mask.reshape(shape).astype(dtype)
        assert self.bound is not None
        return generator.integers(0, max(self.bound, 1), shape).astype(dtype)


def _shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    shapes = {tensor.name: tuple(tensor.dims) for tensor in model.graph.initializer}
    for value in [*model.graph.input, *model.graph.value_info, *model.graph.output]:
        dims = value.type.tensor_type.shape.dim
        if value.type.tensor_type.HasField("shape") and all(dim.HasField("dim_value") for dim in dims):
            shapes.setdefault(value.name, tuple(dim.dim_value for dim in dims))
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output:
            for attribute in node.attribute:
                if attribute.name == "value":
                    shapes.setdefault(node.output[0], tuple(attribute.t.dims))
    return shapes


def _gather_bound(node: onnx.NodeProto, shapes: dict[str, tuple[int, ...]]) -> int | None:
    data = shapes.get(node.input[0])
    if data is None:
        return None
    axis = next((attribute.i for attribute in node.attribute if attribute.name == "axis"), 0)
    return data[axis % len(data)] if data else None


def integer_draws(model: onnx.ModelProto) -> dict[str, IntegerDraw]:
    """The integer graph inputs (integer or bool element type) that index a Gather or act as a mask."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    integer_inputs = [value.name for value in model.graph.input if value.name not in initializers
                      and value.type.tensor_type.elem_type in _INTEGER_TYPES]
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in model.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    shapes = _shapes(model)
    draws = {}
    for name in integer_inputs:
        bounds: list[int] = []
        masks = "mask" in name.lower()
        seen = {name}
        queue = deque([name])
        while queue:
            value = queue.popleft()
            for node in consumers.get(value, []):
                if node.op_type == "Gather" and len(node.input) > 1 and node.input[1] == value:
                    bound = _gather_bound(node, shapes)
                    if bound is not None:
                        bounds.append(bound)
                elif node.op_type in BOOLEAN_USES or (node.op_type == "Where" and node.input[0] == value):
                    masks = True
                elif node.op_type in PASS_THROUGH and node.input and (node.input[0] == value or node.op_type == "Concat"):
                    if node.op_type == "Cast" and _cast_target(node) == onnx.TensorProto.BOOL:
                        masks = True
                    for output in node.output:
                        if output not in seen:
                            seen.add(output)
                            queue.append(output)
        if masks and not bounds:
            draws[name] = IntegerDraw(mask=True)
        elif bounds:
            draws[name] = IntegerDraw(bound=min(bounds))
    return draws


def _cast_target(node: onnx.NodeProto) -> int | None:
    return next((attribute.i for attribute in node.attribute if attribute.name == "to"), None)


_INTEGER_TYPES = frozenset({
    onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
    onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64,
    onnx.TensorProto.BOOL,
})
