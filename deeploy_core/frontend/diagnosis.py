"""onnx's checker and shape inference, with their failures turned into one line that names node and op.

The checker reports the first fault of the whole model, usually without the
op; when it fails, each node is re-checked alone so the message can lead
with the culprit.  Shape-inference messages carry ``(op_type:X, node name:
Y)``; that prefix is rewritten into the same ``node 'Y' (X):`` form.
"""

from __future__ import annotations

import re

import onnx
from onnx import shape_inference

from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.node_label import node_label

_INFERENCE_PREFIX = re.compile(r"\(op_type:(?P<op>[^,]*), node name: (?P<name>.*?)\): (?P<rest>.*)")
_NOISE = re.compile(r"\[(ShapeInferenceError|TypeInferenceError|ValidationError)\]\s*|Inference error\(s\):\s*")


def first_line(error: BaseException) -> str:
    """The first non-empty line of an exception's text (its type name when there is none)."""
    for line in str(error).splitlines():
        if line.strip():
            return line.strip()
    return type(error).__name__


def _culprit(model: onnx.ModelProto) -> str | None:
    """The first node that fails the checker on its own, as ``node 'x' (Op): reason``."""
    context = onnx.checker.C.CheckerContext()
    context.ir_version = model.ir_version
    context.opset_imports = {opset.domain: opset.version for opset in model.opset_import}
    for index, node in enumerate(model.graph.node):
        try:
            onnx.checker.check_node(node, context)
        except Exception as error:  # noqa: BLE001 - the checker raises ValidationError and plain RuntimeErrors
            return f"{node_label(node, index)}: {first_line(error)}"
    return None


def check_model(model: onnx.ModelProto) -> None:
    """onnx's checker; a failure names the offending node when one node alone is at fault."""
    try:
        onnx.checker.check_model(model)
    except Exception as error:  # noqa: BLE001 - ValidationError, or RuntimeError from the C++ side
        culprit = _culprit(model)
        raise ModelImportError(f"invalid model: {culprit or first_line(error)}") from None


def inference_message(error: BaseException) -> str:
    """A shape-inference failure as ``node 'conv' (Conv): reason`` when the node is named.

    onnx lists one error per line under a header; the first one that names a
    node is the cause, later ones are its consequences.
    """
    lines = [_NOISE.sub("", line).strip() for line in str(error).splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return type(error).__name__
    for line in lines:
        found = _INFERENCE_PREFIX.search(line)
        if found is not None:
            reason = found.group("rest")
            nested = _INFERENCE_PREFIX.search(reason)
            if nested is not None:
                reason = nested.group("rest")
            return f"node {found.group('name')!r} ({found.group('op')}): {_NOISE.sub('', reason).strip()}"
    return lines[0]


def infer_strictly(model: onnx.ModelProto) -> onnx.ModelProto:
    """Strict shape and type inference with data propagation (raises onnx's InferenceError)."""
    return shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)


def inference_failed(error: BaseException) -> ModelImportError:
    """The error to raise when strict inference fails."""
    return ModelImportError(f"shape inference failed: {inference_message(error)}")
