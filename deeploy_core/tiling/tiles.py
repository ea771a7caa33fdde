"""From a layer and its tile sizes to concrete tiles, each with its kernel variant.

A tile is a box of the output and the boxes of the inputs it reads.  Its kernel
is the layer's own mapper re-parsed on tile-shaped tensors (with the tile's
attributes, e.g. border padding), rendered with placeholder buffer names; tiles
whose code and box shapes are identical share one *variant*.  So tiling never needs kernels
written for it, and a kernel that cannot handle a tile shape says so through
the same ``NodeMismatch`` it uses for whole tensors.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.errors import DeeployError
from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.mapping import Layer, NodeMismatch
from deeploy_core.tiling.geometry import Box, TileConstraint, full_box


def tile_input_name(index: int) -> str:
    return f"dc_tile_in{index}"


def tile_output_name(index: int) -> str:
    return f"dc_tile_out{index}"


def tile_scratch_name(key: str) -> str:
    return f"dc_tile_scratch_{key}"


@dataclass
class Variant:
    """One distinct kernel of a tiled layer: its code and the tensor box shapes it works on."""

    code: str
    input_shapes: list[tuple[int, ...] | None]
    output_shapes: list[tuple[int, ...]]
    scratch: dict[str, int]
    work: int = 0
    """Multiply-accumulates (or output elements, for kernels without MACs): the cost model's measure of work."""


@dataclass(frozen=True)
class Tile:
    """One tile: the variant that computes it and the boxes it reads and writes."""

    variant: int
    inputs: tuple[Box | None, ...]
    outputs: tuple[Box, ...]


@dataclass
class TiledLayer:
    """All tiles of one layer, in execution order, and their variants."""

    layer: Layer
    tiles: list[Tile]
    variants: list[Variant]
    tile_sizes: dict[int, int] = field(default_factory=dict)

    def input_tile_bytes(self, index: int, ctxt: NetworkContext) -> int:
        """The largest box of input ``index`` over all variants."""
        size = ctxt[self.layer.node.inputs[index].name].dtype.size
        return max((math.prod(v.input_shapes[index] or ()) * size for v in self.variants
                    if v.input_shapes[index] is not None), default=0)

    def output_tile_bytes(self, index: int, ctxt: NetworkContext) -> int:
        """The largest box of present output ``index`` (absent optional outputs are not counted)."""
        size = ctxt[[t for t in self.layer.node.outputs if t.name][index].name].dtype.size
        return max(math.prod(v.output_shapes[index]) * size for v in self.variants)


def box_shape(box: Box) -> tuple[int, ...]:
    """The extent of ``box`` along each axis: the shape of the tensor a tile of that box holds."""
    return tuple(stop - start for start, stop in box)


def output_boxes(out_shape: tuple[int, ...], tile: dict[int, int]) -> list[Box]:
    """Output boxes in C order of the tile grid."""
    ranges_per_axis = []
    for axis, dim in enumerate(out_shape):
        size = tile.get(axis, dim)
        ranges_per_axis.append([(start, min(start + size, dim)) for start in range(0, dim, max(size, 1))] or [(0, 0)])
    return [tuple(combo) for combo in itertools.product(*ranges_per_axis)]


def build_tiles(layer: Layer, ctxt: NetworkContext, constraint: TileConstraint, tile: dict[int, int]) -> TiledLayer:
    """Enumerate the tiles of ``layer`` and re-parse each into a (shared) kernel variant."""
    node = layer.node
    outputs = [ctxt[t.name] for t in node.outputs if t.name]
    tiled = constraint.tiled_axes(node, ctxt)
    unknown = sorted(set(tile) - set(tiled))
    if unknown:
        raise DeeployError(f"layer {layer.name!r} ({layer.op_type}): axis {unknown[0]} of its output cannot be tiled")
    boxes = output_boxes(outputs[0].shape, tile) if len(outputs) == 1 else [full_box(outputs[0].shape)]
    if len(outputs) == 1:
        return tiles_from_boxes(layer, ctxt, constraint, [(out, tuple(constraint.input_boxes(node, ctxt, out)))
                                                          for out in boxes], tile)
    return tiles_from_boxes(layer, ctxt, constraint, [(boxes[0], tuple(
        full_box(ctxt[t.name].shape) if t.name else None for t in node.inputs))], tile)


def tiles_from_boxes(layer: Layer, ctxt: NetworkContext, constraint: TileConstraint,
                     boxes: list[tuple[Box, tuple[Box | None, ...]]], tile: dict[int, int]) -> TiledLayer:
    """The tiles of ``layer`` for given (output box, input boxes) pairs, in that order, each re-parsed into a
    (shared) kernel variant.  A fused pattern's earlier layers get their boxes from their consumers, not a grid;
    a layer with several outputs has one tile writing all of them whole."""
    outputs = [ctxt[t.name] for t in layer.node.outputs if t.name]
    variants: list[Variant] = []
    by_key: dict[tuple[object, ...], int] = {}
    tiles: list[Tile] = []
    for out, in_boxes in boxes:
        out_boxes = (out,) if len(outputs) == 1 else tuple(full_box(o.shape) for o in outputs)
        variant = _variant(layer, ctxt, constraint, out, in_boxes, out_boxes)
        # Same code is not enough: a flat elementwise kernel is the same for boxes 11x10 and 10x11.
        key = (variant.code, tuple(variant.input_shapes), tuple(variant.output_shapes))
        index = by_key.setdefault(key, len(variants))
        if index == len(variants):
            variants.append(variant)
        tiles.append(Tile(index, in_boxes, out_boxes))
    return TiledLayer(layer, tiles, variants, dict(tile))


def _variant(layer: Layer, ctxt: NetworkContext, constraint: TileConstraint, out: Box,
             in_boxes: tuple[Box | None, ...], out_boxes: tuple[Box, ...]) -> Variant:
    node = layer.node
    tile_ctxt = NetworkContext()
    tile_ctxt.for_tiles = True
    inputs: list[gs.Tensor] = []
    for index, (tensor, box) in enumerate(zip(node.inputs, in_boxes)):
        if box is None or not tensor.name:
            inputs.append(gs.Variable.empty())
            continue
        source = ctxt[tensor.name]
        shape = box_shape(box)
        values = None
        if source.values is not None:
            values = np.asarray(source.values).reshape(source.shape)[tuple(slice(a, b) for a, b in box)].copy()
        name = tile_input_name(index)
        kind = BufferKind.CONSTANT if source.is_constant else BufferKind.ACTIVATION
        buffer = tile_ctxt.add(name, source.dtype, shape, kind, values=values)
        buffer.c_name = name
        inputs.append(gs.Constant(name, values) if values is not None else gs.Variable(name, dtype=source.dtype.numpy, shape=shape))
    outputs: list[gs.Tensor] = []
    present = [t for t in node.outputs if t.name]
    for tensor in node.outputs[: node.outputs.index(present[-1]) + 1]:
        if not tensor.name:  # an absent optional output keeps its position (LSTM without Y)
            outputs.append(gs.Variable.empty())
            continue
        index = present.index(tensor)
        box = out_boxes[index]
        source = ctxt[tensor.name]
        name = tile_output_name(index)
        buffer = tile_ctxt.add(name, source.dtype, box_shape(box), BufferKind.ACTIVATION)
        buffer.c_name = name
        outputs.append(gs.Variable(name, dtype=source.dtype.numpy, shape=box_shape(box)))
    tile_node = gs.Node(node.op, name=node.name, attrs=constraint.tile_attributes(node, ctxt, out),
                        inputs=inputs, outputs=outputs, domain=node.domain)
    try:
        representation = layer.mapper.parser(tile_node, tile_ctxt)
    except NodeMismatch as error:
        raise DeeployError(
            f"layer {layer.name!r} ({layer.op_type}): its kernel rejects the tile {box_shape(out)}: {error.mismatch.reason}"
        ) from None
    template = layer.binding.template
    scratch = template.transient_buffers(representation)
    for key in scratch:
        representation[key] = tile_scratch_name(key)
    return Variant(
        code=template.render(representation),
        input_shapes=[box_shape(b) if b is not None else None for b in in_boxes],
        output_shapes=[box_shape(b) for b in out_boxes],
        scratch=scratch,
        work=int(representation.get("macs") or representation.get("size")
                 or sum(math.prod(box_shape(b)) for b in out_boxes)),
    )


def variant_for_boxes(layer: Layer, ctxt: NetworkContext, constraint: TileConstraint, out: Box,
                      in_boxes: tuple[Box | None, ...]) -> Variant:
    """The layer's kernel re-parsed for one output box (a tile, or a core's share of one)."""
    return _variant(layer, ctxt, constraint, out, in_boxes, (out,))


def scratch_bytes(layer: Layer, ctxt: NetworkContext, constraint: TileConstraint, out: Box) -> int:
    """Total scratch the layer's kernel asks for on the tile with output box ``out``."""
    in_boxes = tuple(constraint.input_boxes(layer.node, ctxt, out))
    return sum(_variant(layer, ctxt, constraint, out, in_boxes, (out,)).scratch.values())
