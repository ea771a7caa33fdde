"""How a Gather layer is cut into tiles: along every output axis, the gathered data axis whole.

Gather's output is ``data[:axis] + indices + data[axis + 1:]`` in shape.  An
output tile takes a range of the leading data axes, a box of the indices and
a range of the trailing data axes; it reads the same ranges of the data and
the indices' box, but all of the gathered axis, since any index may pick any
row (indices computed at run time, token ids, say).  So an embedding table of
V rows × E columns is read E-column slices at a time, and the indices and the
output in tiles of tokens.  Without this, a CCT's positional embedding needed
its whole table, indices and output in L1 at once.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Box, Extent, NetworkContext, TileConstraint


class GatherTiles(TileConstraint):
    """Every output axis; the data's gathered axis is read whole by every tile."""

    def _layout(self, node: gs.Node, ctxt: NetworkContext) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        """Data shape, the indices' axes as the output has them, and the gathered axis.

        The indices' rank is read off the output (``data`` rank - 1 + it):
        a scalar index may be stored with shape ``[1]``.
        """
        data = tuple(ctxt[node.inputs[0].name].shape)
        gathered = int(node.attrs.get("axis", 0)) % max(len(data), 1)
        out = self._out_shape(node, ctxt)
        index_rank = len(out) - len(data) + 1
        return data, tuple(out[gathered: gathered + index_rank]), gathered

    def _indices_follow_output(self, node: gs.Node, ctxt: NetworkContext, indices: tuple[int, ...]) -> bool:
        return tuple(ctxt[node.inputs[1].name].shape) == indices

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        return tuple(range(len(self._out_shape(node, ctxt))))

    def _data_axis_source(self, axis: int, gathered: int, index_rank: int) -> int | None:
        """The output axis a data axis follows (None: the gathered axis, read whole)."""
        if axis < gathered:
            return axis
        if axis == gathered:
            return None
        return axis - 1 + index_rank

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        data, indices, gathered = self._layout(node, ctxt)
        data_box = []
        for axis, dim in enumerate(data):
            source = self._data_axis_source(axis, gathered, len(indices))
            data_box.append((0, dim) if source is None else out[source])
        index_box = (tuple(out[gathered: gathered + len(indices)]) if self._indices_follow_output(node, ctxt, indices)
                     else tuple((0, dim) for dim in ctxt[node.inputs[1].name].shape))
        return [tuple(data_box), index_box]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        data, indices, gathered = self._layout(node, ctxt)
        data_extents = []
        for axis, dim in enumerate(data):
            source = self._data_axis_source(axis, gathered, len(indices))
            data_extents.append(Extent(dim) if source is None else Extent(dim, source))
        if not self._indices_follow_output(node, ctxt, indices):
            return [tuple(data_extents), tuple(Extent(dim) for dim in ctxt[node.inputs[1].name].shape)]
        return [tuple(data_extents), tuple(Extent(dim, gathered + position) for position, dim in enumerate(indices))]
