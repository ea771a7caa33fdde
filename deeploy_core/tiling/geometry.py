"""Tile geometry per operator: which output dimensions may be cut, and which input regions a tile reads.

A ``TileConstraint`` answers three questions for one layer:

* which axes of the output can be tiled (all others stay whole);
* for an output tile (a box of half-open ranges), the box of every input that
  the kernel reads — and the node attributes the tile's kernel must use
  (a convolution tile at the border keeps its padding, an inner tile has none);
* for the CP-SAT model, how big each input box can get as an affine function of
  the output tile sizes (``extent = min(full, scale · t + offset)``).

Kernels are not rewritten for tiling: the kernel of a tile is the platform's
own kernel, re-parsed on tile-shaped tensors.  So a constraint only states
ONNX geometry, which is the same on every platform; platforms add *policy*
constraints (full channels, multiples of N) on top.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.mapping.tile_constraint import Box as Box
from deeploy_core.mapping.tile_constraint import Extent as Extent
from deeploy_core.mapping.tile_constraint import Range as Range
from deeploy_core.mapping.tile_constraint import TileConstraint as TileConstraint
from deeploy_core.mapping.tile_constraint import full_box as full_box


def _broadcasts_into(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> bool:
    """``shape`` numpy-broadcasts to ``out_shape``.  An input that does not (CastLike's second input, read only
    for its type, may have a higher rank than the output) is not indexed along the output's axes: it stays whole."""
    lead = len(out_shape) - len(shape)
    return lead >= 0 and all(dim in (1, out_shape[lead + i]) for i, dim in enumerate(shape))


def _broadcast_extents(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> tuple[Extent, ...]:
    if not _broadcasts_into(shape, out_shape):
        return tuple(Extent(dim) for dim in shape)
    lead = len(out_shape) - len(shape)
    return tuple(Extent(dim) if dim == 1 and out_shape[lead + i] != 1 else Extent(dim, lead + i)
                 for i, dim in enumerate(shape))


class Elementwise(TileConstraint):
    """Every output axis; each input reads the same box, numpy-broadcast (Add, Relu, Cast, …)."""

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        return tuple(range(len(self._out_shape(node, ctxt))))

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        out_shape = self._out_shape(node, ctxt)
        return [self._box(ctxt[t.name].shape, out_shape, out) if t.name else None for t in node.inputs]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        out_shape = self._out_shape(node, ctxt)
        return [_broadcast_extents(ctxt[t.name].shape, out_shape) if t.name else None for t in node.inputs]

    @staticmethod
    def _box(shape: tuple[int, ...], out_shape: tuple[int, ...], out: Box) -> Box:
        if not _broadcasts_into(shape, out_shape):
            return full_box(shape)
        lead = len(out_shape) - len(shape)
        return tuple((0, 1) if dim == 1 and out_shape[lead + i] != 1 else out[lead + i] for i, dim in enumerate(shape))


class ChannelParameters(Elementwise):
    """Elementwise on input 0; parameters with one value per channel (axis ``axis``) follow that axis.

    RequantShift and the requantised kernels index ``mul``/``add`` along axis 1;
    Quantize/DequantizeLinear index scales along their ``axis`` attribute.
    """

    def __init__(self, data_inputs: int = 1, axis_attribute: str | None = None) -> None:
        self.data_inputs = data_inputs
        self.axis_attribute = axis_attribute

    def _axis(self, node: gs.Node, rank: int) -> int:
        axis = int(node.attrs.get(self.axis_attribute, 1)) if self.axis_attribute else 1
        return axis % max(rank, 1)

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        out_shape = self._out_shape(node, ctxt)
        axis = self._axis(node, len(out_shape))
        boxes: list[Box | None] = []
        for index, tensor in enumerate(node.inputs):
            if not tensor.name:
                boxes.append(None)
                continue
            shape = ctxt[tensor.name].shape
            if index < self.data_inputs:
                boxes.append(self._box(shape, out_shape, out))
            elif math.prod(shape) == 1:
                boxes.append(full_box(shape))
            else:  # one value per channel: a 1-D slice of the channel range
                boxes.append(_channel_box(shape, out[axis]))
        return boxes

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        out_shape = self._out_shape(node, ctxt)
        axis = self._axis(node, len(out_shape))
        extents: list[tuple[Extent, ...] | None] = []
        for index, tensor in enumerate(node.inputs):
            if not tensor.name:
                extents.append(None)
                continue
            shape = ctxt[tensor.name].shape
            if index < self.data_inputs:
                extents.append(_broadcast_extents(shape, out_shape))
            elif math.prod(shape) == 1:
                extents.append(tuple(Extent(dim) for dim in shape))
            else:
                extents.append(tuple(Extent(dim, axis) if dim > 1 else Extent(dim) for dim in shape))
        return extents


def _channel_box(shape: tuple[int, ...], channels: Range) -> Box:
    """The box of a per-channel parameter (its one non-unit axis is the channel axis)."""
    return tuple(channels if dim > 1 else (0, 1) for dim in shape)


@dataclass(frozen=True)
class _Window:
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads_begin: tuple[int, ...]
    pads_end: tuple[int, ...]


def _window(node: gs.Node, in_shape: tuple[int, ...], out_shape: tuple[int, ...], kernel: list[int]) -> _Window:
    """Window parameters with auto_pad resolved into explicit pads (ONNX rules)."""
    spatial = len(kernel)
    strides = tuple(int(s) for s in node.attrs.get("strides", [1] * spatial))
    dilations = tuple(int(d) for d in node.attrs.get("dilations", [1] * spatial))
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for axis in range(spatial):
            effective = (kernel[axis] - 1) * dilations[axis] + 1
            total = max(0, (out_shape[2 + axis] - 1) * strides[axis] + effective - in_shape[2 + axis])
            small, large = total // 2, total - total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else large)
            end.append(large if auto_pad == "SAME_UPPER" else small)
        return _Window(tuple(kernel), strides, dilations, tuple(begin), tuple(end))
    if auto_pad == "VALID":
        return _Window(tuple(kernel), strides, dilations, (0,) * spatial, (0,) * spatial)
    pads = [int(p) for p in node.attrs.get("pads", [0] * 2 * spatial)]
    return _Window(tuple(kernel), strides, dilations, tuple(pads[:spatial]), tuple(pads[spatial:]))


class SlidingWindow(TileConstraint):
    """Convolution and pooling: batch, output channels and every spatial axis may be cut.

    An output range ``[o0, o1)`` of a spatial axis reads input rows
    ``[o0·s − pb, (o1−1)·s − pb + (k−1)·d + 1)`` clipped to the tensor; the part
    cut off by the clipping becomes the tile's own padding.
    """

    def __init__(self, weights: bool, channel_parameters: tuple[int, ...] = (), scalars: tuple[int, ...] = (),
                 data_index: int = 0, weight_index: int = 1) -> None:
        self.weights = weights
        self.channel_parameters = channel_parameters
        self.scalars = scalars
        self.data_index = data_index
        self.weight_index = weight_index

    def _kernel(self, node: gs.Node, ctxt: NetworkContext) -> list[int]:
        if self.weights:
            return list(ctxt[node.inputs[self.weight_index].name].shape[2:])
        if "kernel_shape" in node.attrs:
            return [int(k) for k in node.attrs["kernel_shape"]]
        return list(ctxt[node.inputs[self.data_index].name].shape[2:])  # global pooling

    def _group(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, int, int]:
        """(groups, input channels, output channels)."""
        x = ctxt[node.inputs[self.data_index].name].shape
        y = self._out_shape(node, ctxt)
        return int(node.attrs.get("group", 1)), x[1], y[1]

    def _channels_follow(self, node: gs.Node, ctxt: NetworkContext) -> bool:
        """Whether an output-channel tile reads only the matching input channels (pooling, depthwise)."""
        groups, c, m = self._group(node, ctxt)
        return not self.weights or (groups == c == m)

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        rank = len(self._out_shape(node, ctxt))
        groups, _, _ = self._group(node, ctxt)
        channel = (1,) if groups == 1 or self._channels_follow(node, ctxt) else ()
        return (0, *channel, *range(2, rank))

    def whole_axis_reason(self, node: gs.Node, ctxt: NetworkContext, axis: int) -> str:
        return "a grouped convolution's output channels are kept whole: each group reads its own input channels"

    def _geometry(self, node: gs.Node, ctxt: NetworkContext) -> _Window:
        x = ctxt[node.inputs[self.data_index].name].shape
        return _window(node, x, self._out_shape(node, ctxt), self._kernel(node, ctxt))

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        x_shape = ctxt[node.inputs[self.data_index].name].shape
        win = self._geometry(node, ctxt)
        channels = out[1] if self._channels_follow(node, ctxt) else (0, x_shape[1])
        spatial = []
        for axis, (o0, o1) in enumerate(out[2:]):
            start = o0 * win.strides[axis] - win.pads_begin[axis]
            stop = (o1 - 1) * win.strides[axis] - win.pads_begin[axis] + (win.kernel[axis] - 1) * win.dilations[axis] + 1
            spatial.append((max(0, start), min(x_shape[2 + axis], stop)))
        boxes: list[Box | None] = []
        for index, tensor in enumerate(node.inputs):
            if not tensor.name:
                boxes.append(None)
            elif index == self.data_index:
                boxes.append((out[0], channels, *spatial))
            elif self.weights and index == self.weight_index:
                shape = ctxt[tensor.name].shape
                boxes.append((out[1], *full_box(shape[1:])))
            elif index in self.channel_parameters and math.prod(ctxt[tensor.name].shape) > 1:
                boxes.append(_channel_box(ctxt[tensor.name].shape, out[1]))
            else:
                boxes.append(full_box(ctxt[tensor.name].shape))
        return boxes

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        x_shape = ctxt[node.inputs[self.data_index].name].shape
        win = self._geometry(node, ctxt)
        follow = self._channels_follow(node, ctxt)
        extents: list[tuple[Extent, ...] | None] = []
        for index, tensor in enumerate(node.inputs):
            if not tensor.name:
                extents.append(None)
                continue
            shape = ctxt[tensor.name].shape
            if index == self.data_index:
                spatial = tuple(
                    Extent(x_shape[2 + a], 2 + a, win.strides[a], (win.kernel[a] - 1) * win.dilations[a] + 1 - win.strides[a])
                    for a in range(len(win.kernel))
                )
                extents.append((Extent(shape[0], 0), Extent(shape[1], 1) if follow else Extent(shape[1]), *spatial))
            elif self.weights and index == self.weight_index:
                extents.append((Extent(shape[0], 1), *(Extent(d) for d in shape[1:])))
            elif index in self.channel_parameters and math.prod(shape) > 1:
                extents.append(tuple(Extent(d, 1) if d > 1 else Extent(d) for d in shape))
            else:
                extents.append(tuple(Extent(d) for d in shape))
        return extents

    def tile_attributes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> dict[str, Any]:
        attrs = dict(node.attrs)
        if "kernel_shape" not in attrs and not self.weights:  # global pooling keeps its own kernel
            return attrs
        x_shape = ctxt[node.inputs[self.data_index].name].shape
        win = self._geometry(node, ctxt)
        begin, end = [], []
        for axis, (o0, o1) in enumerate(out[2:]):
            start = o0 * win.strides[axis] - win.pads_begin[axis]
            stop = (o1 - 1) * win.strides[axis] - win.pads_begin[axis] + (win.kernel[axis] - 1) * win.dilations[axis] + 1
            begin.append(max(0, -start))
            # A ceil_mode window may run past the end padding: that overhang is not padding (an AveragePool with
            # count_include_pad=1 must not count it), so the tile's end padding stops where the node's does.
            end.append(max(0, min(stop, x_shape[2 + axis] + win.pads_end[axis]) - x_shape[2 + axis]))
        attrs.pop("auto_pad", None)
        attrs["pads"] = begin + end
        if self.weights and int(attrs.get("group", 1)) > 1 and self._channels_follow(node, ctxt):
            attrs["group"] = out[1][1] - out[1][0]  # a depthwise tile has as many groups as channels
        attrs.pop("ceil_mode", None)  # each tile's output size is exact
        return attrs


class GlobalPool(SlidingWindow):
    """Global pooling: batch and channels may be cut; every tile reads whole planes."""

    def __init__(self) -> None:
        super().__init__(weights=False)

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        return (0, 1)

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        x_shape = ctxt[node.inputs[0].name].shape
        boxes: list[Box | None] = [(out[0], out[1], *full_box(x_shape[2:]))]
        return boxes + [full_box(ctxt[t.name].shape) if t.name else None for t in node.inputs[1:]]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        x_shape = ctxt[node.inputs[0].name].shape
        first = (Extent(x_shape[0], 0), Extent(x_shape[1], 1), *(Extent(d) for d in x_shape[2:]))
        return [first] + [tuple(Extent(d) for d in ctxt[t.name].shape) if t.name else None for t in node.inputs[1:]]

    def tile_attributes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> dict[str, Any]:
        return dict(node.attrs)


class MatrixProduct(TileConstraint):
    """Gemm / MatMul: batch axes, rows M and columns N may be cut; the reduction axis K stays whole.

    ``a``/``b`` are the operand input indices, ``bias`` the numpy-broadcast
    addend (Gemm's C), ``channel_parameters`` per-channel requantisation inputs
    (indexed along output axis 1), everything else is a scalar.  Of a product
    with more than two output axes, the parameters follow axis 1 whatever the
    rank when ``axis_one_channels`` is set (Deeploy's requantised MatMuls, as
    RequantShift: the rows of a 3-D product, a batch axis beyond); otherwise
    (per-column scales of QLinearMatMul) axis 1 and the columns stay whole.
    """

    def __init__(self, a: int = 0, b: int = 1, bias: int | None = None, channel_parameters: tuple[int, ...] = (),
                 gemm: bool = False, axis_one_channels: bool = False) -> None:
        self.a, self.b, self.bias, self.channel_parameters, self.gemm = a, b, bias, channel_parameters, gemm
        self.axis_one_channels = axis_one_channels

    def _channelwise(self, node: gs.Node, ctxt: NetworkContext, index: int, rank: int) -> bool:
        """Whether input ``index`` is a per-channel parameter cut along with output axis 1."""
        return (index in self.channel_parameters and (rank == 2 or self.axis_one_channels)
                and math.prod(ctxt[node.inputs[index].name].shape) > 1)

    def _has_vector_operand(self, node: gs.Node, ctxt: NetworkContext) -> bool:
        """A 1-D operand (numpy's matmul drops its axis from the output): such products are kept whole."""
        return any(index < len(node.inputs) and node.inputs[index].name and len(ctxt[node.inputs[index].name].shape) < 2
                   for index in (self.a, self.b))

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        rank = len(self._out_shape(node, ctxt))
        if self._has_vector_operand(node, ctxt):
            return ()
        if rank > 2 and not self.axis_one_channels and any(
                t.name and i in self.channel_parameters and math.prod(ctxt[t.name].shape) > 1
                for i, t in enumerate(node.inputs)):
            # Batched products index their parameters along axis 1 or the columns: keep both whole.
            return tuple(a for a in range(rank) if a not in (1, rank - 1))
        return tuple(range(rank))

    def whole_axis_reason(self, node: gs.Node, ctxt: NetworkContext, axis: int) -> str:
        if self._has_vector_operand(node, ctxt):
            return "a product with a vector operand (rank 1) runs as one tile"
        return "the per-channel parameters of a batched product follow axis 1 or the columns, so both stay whole"

    def _trans(self, node: gs.Node) -> tuple[bool, bool]:
        if not self.gemm:
            return False, False
        return bool(int(node.attrs.get("transA", 0))), bool(int(node.attrs.get("transB", 0)))

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        if self._has_vector_operand(node, ctxt):
            return [full_box(ctxt[t.name].shape) if t.name else None for t in node.inputs]
        out_shape = self._out_shape(node, ctxt)
        trans_a, trans_b = self._trans(node)
        rows, cols, batch = out[-2], out[-1], out[:-2]
        boxes: list[Box | None] = []
        for index, tensor in enumerate(node.inputs):
            if not tensor.name:
                boxes.append(None)
                continue
            shape = ctxt[tensor.name].shape
            if index == self.a:
                k = (0, shape[-2] if trans_a else shape[-1])
                matrix = (k, rows) if trans_a else (rows, k)
                boxes.append(Elementwise._box(shape[:-2], tuple(out_shape[:-2]), batch) + matrix)
            elif index == self.b:
                k = (0, shape[-1] if trans_b else shape[-2])
                matrix = (cols, k) if trans_b else (k, cols)
                boxes.append(Elementwise._box(shape[:-2], tuple(out_shape[:-2]), batch) + matrix)
            elif index == self.bias:
                boxes.append(Elementwise._box(shape, out_shape, out))
            elif self._channelwise(node, ctxt, index, len(out_shape)):
                boxes.append(_channel_box(shape, out[1]))
            else:
                boxes.append(full_box(shape))
        return boxes

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        if self._has_vector_operand(node, ctxt):
            return [tuple(Extent(d) for d in ctxt[t.name].shape) if t.name else None for t in node.inputs]
        out_shape = self._out_shape(node, ctxt)
        rank = len(out_shape)
        trans_a, trans_b = self._trans(node)
        extents: list[tuple[Extent, ...] | None] = []
        for index, tensor in enumerate(node.inputs):
            if not tensor.name:
                extents.append(None)
                continue
            shape = ctxt[tensor.name].shape
            batch = _broadcast_extents(shape[:-2], out_shape[:-2]) if index in (self.a, self.b) else ()
            if index == self.a:
                rows, k = Extent(shape[-1] if trans_a else shape[-2], rank - 2), Extent(shape[-2] if trans_a else shape[-1])
                extents.append(batch + ((k, rows) if trans_a else (rows, k)))
            elif index == self.b:
                cols, k = Extent(shape[-2] if trans_b else shape[-1], rank - 1), Extent(shape[-1] if trans_b else shape[-2])
                extents.append(batch + ((cols, k) if trans_b else (k, cols)))
            elif index == self.bias:
                extents.append(_broadcast_extents(shape, out_shape))
            elif self._channelwise(node, ctxt, index, rank):
                extents.append(tuple(Extent(d, 1) if d > 1 else Extent(d) for d in shape))
            else:
                extents.append(tuple(Extent(d) for d in shape))
        return extents


class AlongAxes(TileConstraint):
    """Normalisations and reductions: output axes outside the reduced ones may be cut.

    ``kind`` says where the reduced axes come from: ``softmax`` (the ``axis``
    attribute), ``layernorm`` (``axis`` to the end), ``reduce`` (the ``axes``
    input or attribute, ``keepdims``).  Extra inputs (scale, bias) stay whole.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def _reduced(self, node: gs.Node, ctxt: NetworkContext) -> tuple[set[int], bool]:
        rank = len(ctxt[node.inputs[0].name].shape)
        if self.kind == "softmax":
            return {int(node.attrs.get("axis", -1)) % rank}, True
        if self.kind == "layernorm":
            return set(range(int(node.attrs.get("axis", -1)) % rank, rank)), True
        axes = node.attrs.get("axes")
        if axes is None and len(node.inputs) > 1 and node.inputs[1].name:
            constant = ctxt[node.inputs[1].name].values
            if constant is not None:
                axes = [int(a) for a in constant.reshape(-1)]
        reduced = set(range(rank)) if not axes else {int(a) % rank for a in axes}
        return reduced, bool(int(node.attrs.get("keepdims", 1)))

    def _mapping(self, node: gs.Node, ctxt: NetworkContext) -> list[int | None]:
        """For each input axis: the output axis it follows (None: reduced, whole)."""
        rank = len(ctxt[node.inputs[0].name].shape)
        reduced, keep = self._reduced(node, ctxt)
        mapping: list[int | None] = []
        position = 0
        for axis in range(rank):
            if axis in reduced:
                mapping.append(None)
                position += 1 if keep else 0
            else:
                mapping.append(position)
                position += 1
        return mapping

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        return tuple(axis for axis in self._mapping(node, ctxt) if axis is not None)

    def whole_axis_reason(self, node: gs.Node, ctxt: NetworkContext, axis: int) -> str:
        what = {"softmax": "the softmax normalises", "layernorm": "the normalisation reduces",
                "reduce": "the reduction reduces"}.get(self.kind, "the kernel reduces")
        return f"{what} along it: every tile needs the whole axis"

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        shape = ctxt[node.inputs[0].name].shape
        first = tuple((0, shape[i]) if o is None else out[o] for i, o in enumerate(self._mapping(node, ctxt)))
        return [first] + [full_box(ctxt[t.name].shape) if t.name else None for t in node.inputs[1:]]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        shape = ctxt[node.inputs[0].name].shape
        first = tuple(Extent(shape[i], o) for i, o in enumerate(self._mapping(node, ctxt)))
        return [first] + [tuple(Extent(d) for d in ctxt[t.name].shape) if t.name else None for t in node.inputs[1:]]



class LastAxisRows(AlongAxes):
    """Whole rows of the last axis per tile, whatever an ``axis`` attribute says.

    Deeploy's integer softmaxes and norms (iSoftmax, ITAMax, ITAPartialMax,
    iLayerNorm, iRMSNorm) always reduce the last axis, and QuantLib copies the
    ``axis`` of the Softmax it replaced onto them; reading that attribute would
    let the tiler cut the reduced rows.  Extra inputs (weight, bias) stay whole.
    """

    def __init__(self) -> None:
        super().__init__("last-axis")

    def _reduced(self, node: gs.Node, ctxt: NetworkContext) -> tuple[set[int], bool]:
        return {len(ctxt[node.inputs[0].name].shape) - 1}, True

class Permutation(TileConstraint):
    """Transpose: output axis i reads input axis ``perm[i]``."""

    def _perm(self, node: gs.Node, ctxt: NetworkContext) -> list[int]:
        rank = len(ctxt[node.inputs[0].name].shape)
        return [int(p) for p in node.attrs.get("perm", list(range(rank))[::-1])]

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        return tuple(range(len(self._perm(node, ctxt))))

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        perm = self._perm(node, ctxt)
        box: list[Range] = [(0, 0)] * len(perm)
        for out_axis, in_axis in enumerate(perm):
            box[in_axis] = out[out_axis]
        return [tuple(box)]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        perm = self._perm(node, ctxt)
        shape = ctxt[node.inputs[0].name].shape
        inverse = {in_axis: out_axis for out_axis, in_axis in enumerate(perm)}
        return [tuple(Extent(shape[a], inverse[a]) for a in range(len(shape)))]


class Concatenation(TileConstraint):
    """Concat: every axis but the concatenation axis may be cut; inputs are read whole along it."""

    def _axis(self, node: gs.Node, ctxt: NetworkContext) -> int:
        return int(node.attrs.get("axis", 0)) % len(self._out_shape(node, ctxt))

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        axis = self._axis(node, ctxt)
        return tuple(a for a in range(len(self._out_shape(node, ctxt))) if a != axis)

    def whole_axis_reason(self, node: gs.Node, ctxt: NetworkContext, axis: int) -> str:
        return "the concatenation axis: each tile reads its inputs whole along it"

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        axis = self._axis(node, ctxt)
        return [tuple((0, ctxt[t.name].shape[a]) if a == axis else out[a] for a in range(len(out))) for t in node.inputs]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        axis = self._axis(node, ctxt)
        return [tuple(Extent(d) if a == axis else Extent(d, a) for a, d in enumerate(ctxt[t.name].shape))
                for t in node.inputs]
