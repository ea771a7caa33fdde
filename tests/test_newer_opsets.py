"""Models newer than the canonical opset compile at their own opset when nothing needs converting.

onnx's version converter has no down-adapters for operators widened after
opset 24 (BitShift's signed types, SpaceToDepth's ``mode``, ...), so
converting such a model down failed although its operators mean what they
meant before.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.frontend.importer import CANONICAL_OPSET, canonicalise
from deeploy_core.frontend.versions import NEWEST_REVIEWED_OPSET, conversion_target


def test_reviewed_newer_opsets_are_kept_and_older_ones_converted() -> None:
    assert conversion_target(NEWEST_REVIEWED_OPSET, CANONICAL_OPSET) == NEWEST_REVIEWED_OPSET
    assert conversion_target(CANONICAL_OPSET + 1, CANONICAL_OPSET) == CANONICAL_OPSET + 1
    assert conversion_target(13, CANONICAL_OPSET) == CANONICAL_OPSET
    assert conversion_target(NEWEST_REVIEWED_OPSET + 1, CANONICAL_OPSET) == CANONICAL_OPSET


def test_space_to_depth_crd_at_opset_28_imports_unchanged() -> None:
    node = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode="CRD")
    graph = helper.make_graph([node], "newer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 28)])
    expected_model = onnx.ModelProto()
    expected_model.CopyFrom(model)
    imported = canonicalise(model)
    assert [entry.version for entry in imported.model.opset_import if entry.domain == ""] == [28]
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    np.testing.assert_array_equal(ReferenceEvaluator(imported.model).run(None, {"x": x})[0],
                                  ReferenceEvaluator(expected_model).run(None, {"x": x})[0])
