"""The tile constraint of recurrent layers (ONNX LSTM, GRU, RNN): one tile, for a reason the report can give.

A recurrence computes step t from the whole hidden state of step t-1, so
neither the sequence axis nor the hidden units can be cut into independent
tiles: the layer runs as one tile.  Its gate weights, which every step reads
whole, may still stay in L2 when they do not fit beside the tile
(:mod:`deeploy_core.tiling.home_inputs`).
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.geometry import TileConstraint


class Recurrence(TileConstraint):
    """Untiled: a recurrence runs as one tile, since each step needs the whole state of the step before."""

    def whole_axis_reason(self, node: gs.Node, ctxt: NetworkContext, axis: int) -> str:
        return "a recurrence: each step needs the whole hidden state of the step before, so no axis is cut"
