"""Element-wise tile geometry for inputs that do not broadcast into the output (issue 31).

CastLike's second input only names the target type; the ``_expanded`` Celu/Selu/Shrink/ThresholdedRelu bodies
cast a scalar constant like a 3-D input, so that input has a higher rank than the output and computing its
broadcast extents raised IndexError.  Such an input is not indexed along the output's axes: it stays whole.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.ir.dtypes import FLOAT32
from deeploy_core.tiling.geometry import Elementwise, Extent


def _cast_like_scalar() -> tuple[gs.Node, NetworkContext]:
    ctxt = NetworkContext("t_")
    ctxt.add("scalar", FLOAT32, (), BufferKind.INPUT)
    ctxt.add("like", FLOAT32, (3, 4, 5), BufferKind.INPUT)
    ctxt.add("y", FLOAT32, (), BufferKind.OUTPUT)
    node = gs.Node("CastLike", inputs=[gs.Variable("scalar"), gs.Variable("like")], outputs=[gs.Variable("y")])
    return node, ctxt


def test_an_input_of_higher_rank_than_the_output_stays_whole() -> None:
    node, ctxt = _cast_like_scalar()
    assert Elementwise().input_extents(node, ctxt) == [(), (Extent(3), Extent(4), Extent(5))]
    assert Elementwise().input_boxes(node, ctxt, ()) == [(), ((0, 3), (0, 4), (0, 5))]


def test_a_broadcast_input_still_follows_the_output_axes() -> None:
    ctxt = NetworkContext("t_")
    ctxt.add("a", FLOAT32, (2, 6), BufferKind.INPUT)
    ctxt.add("b", FLOAT32, (1, 6), BufferKind.INPUT)
    ctxt.add("y", FLOAT32, (2, 6), BufferKind.OUTPUT)
    node = gs.Node("Add", inputs=[gs.Variable("a"), gs.Variable("b")], outputs=[gs.Variable("y")])
    assert Elementwise().input_extents(node, ctxt)[1] == (Extent(1), Extent(6, 1))
    assert Elementwise().input_boxes(node, ctxt, ((1, 2), (0, 3)))[1] == ((0, 1), (0, 3))
