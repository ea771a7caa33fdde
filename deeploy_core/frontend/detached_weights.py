"""Big weights stay out of the way of onnx's checker, converter and shape inference.

Each of those tools serialises the whole model to hand it to onnx's C++
code, so a network's weights (resnet18: 45 MB) were copied four times per
import, more time than reading the file.  None of them needs a weight's
values, only its type and shape: a large float initializer is detached for
that time and stands in the graph as an input of the same type and shape,
then goes back in place.  Integer initializers and small float ones stay,
since shape arithmetic and data propagation read them (Reshape targets,
Slice bounds, Gather indices).
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx
from onnx import TensorProto, helper

DETACH_BYTES = 64 * 1024
"""Float initializers larger than this are detached; shape-carrying constants are far smaller and integer."""
_FLOATS = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16})


@dataclass
class DetachedWeights:
    """The initializers taken out, in their original order, and the inputs that stood in for them."""

    initializers: list[TensorProto]
    stand_ins: frozenset[str]

    def reattach(self, model: onnx.ModelProto) -> None:
        """Put the initializers back into ``model`` (which the tools may have replaced) and drop the stand-ins."""
        kept = [value for value in model.graph.input if value.name not in self.stand_ins]
        del model.graph.input[:]
        model.graph.input.extend(kept)
        present = {tensor.name for tensor in model.graph.initializer}
        model.graph.initializer.extend(tensor for tensor in self.initializers if tensor.name not in present)


def _size_bytes(tensor: TensorProto) -> int:
    if tensor.raw_data:
        return len(tensor.raw_data)
    return 4 * (len(tensor.float_data) + len(tensor.double_data) * 2 + len(tensor.int32_data))


def detach_large_weights(model: onnx.ModelProto, threshold: int = DETACH_BYTES) -> DetachedWeights:
    """Take the float initializers over ``threshold`` bytes out of ``model``, each replaced by an input.

    An initializer that the graph already lists as an input (IR < 4) keeps
    that input; only the stand-ins added here are removed on reattaching.
    """
    listed = {value.name for value in model.graph.input}
    detached, kept, stand_ins = [], [], []
    for tensor in model.graph.initializer:
        if tensor.data_type in _FLOATS and not tensor.data_location and _size_bytes(tensor) > threshold:
            saved = TensorProto()
            saved.CopyFrom(tensor)  # the field is cleared below: keep a message of our own
            detached.append(saved)
            if tensor.name not in listed:
                stand_ins.append(helper.make_tensor_value_info(tensor.name, tensor.data_type, list(tensor.dims)))
        else:
            kept.append(tensor)
    if detached:
        del model.graph.initializer[:]
        model.graph.initializer.extend(kept)
        model.graph.input.extend(stand_ins)
    return DetachedWeights(detached, frozenset(value.name for value in stand_ins))
