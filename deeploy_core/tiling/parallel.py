"""Sharing a tile among the cores of a cluster: each core computes a contiguous slice of the tile's output.

A cluster runs a tiled layer on all of its cores.  The leader core moves the
tiles (DMA); after a barrier, every core computes its *share* of the tile and a
second barrier ends the tile.  A share is the tile's output box cut along its
outermost axis longer than one element (output channels of a convolution, rows
of a matrix product, …) into at most ``cores`` chunks.  The kernel for a share
is the layer's own kernel re-parsed on the share's boxes, exactly as tiles get
theirs, so no kernel is written for parallelism.

A share needs every box it reads and writes to be one contiguous run of its
tile buffer (kernels take dense tensors); where that fails (a tile split along
rows whose input has several channels, a kernel rejecting the share shape) the
variant runs on the leader alone.  Scratch is per core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.geometry import Box, TileConstraint
from deeploy_core.tiling.strides import element_strides
from deeploy_core.tiling.tiles import Tile, TiledLayer, Variant, box_shape, variant_for_boxes


@dataclass(frozen=True)
class ClusterParallelism:
    """How a platform's cluster runs a tiled layer (C templates, platform data).

    ``fork`` is formatted with ``task`` (a ``void task(void *)`` function) and
    runs it on every core; ``core_id`` is an expression; ``barrier`` a
    statement; ``count_work`` (optional) is formatted with ``macs`` and tells the
    runtime how much work the calling core did, for performance counters.
    """

    cores: int
    fork: str
    core_id: str
    barrier: str
    count_work: str = ""

    def __post_init__(self) -> None:
        if self.cores < 1:
            raise DeeployError(f"a cluster needs at least one core (got {self.cores})")


@dataclass(frozen=True)
class CoreShare:
    """One core's part of a tile: which share kernel it runs and where its boxes start in the tile buffers."""

    sub: int
    input_offsets: dict[int, int]
    output_offsets: dict[int, int]
    work: int


@dataclass(frozen=True)
class ShareLayout:
    """How one share sits in its tile: where its inputs start in the tile buffers, their shapes, the attributes.

    Every tile of a variant runs the same share kernels with the same offsets
    taken from the tile table, so a variant can be split only when all its
    tiles cut into equal layouts; comparing these values is that check.
    ``input_offsets`` holds None for an input whose share is not one dense run
    of its tile buffer (0 for an absent input).
    """

    input_offsets: tuple[int | None, ...]
    input_shapes: tuple[tuple[int, ...] | None, ...]
    attributes: dict[str, Any]

    @property
    def dense_offsets(self) -> tuple[int, ...] | None:
        """The input offsets when every input of the share is one run of its tile buffer, else None."""
        offsets = tuple(offset for offset in self.input_offsets if offset is not None)
        return offsets if len(offsets) == len(self.input_offsets) else None


@dataclass
class VariantSplit:
    """A variant cut into per-core shares; ``shares[core]`` is None for an idle core."""

    axis: int
    subs: list[Variant]
    shares: list[CoreShare | None]
    reason: str = ""

    @property
    def busy_cores(self) -> int:
        return sum(share is not None for share in self.shares)


@dataclass
class LayerSplit:
    """The per-variant splits of one tiled layer (None: the variant runs on the leader)."""

    variants: list[VariantSplit | None] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def tile_work(self, tiled: TiledLayer, tile: Tile, cores: int) -> list[int]:
        """Work (MACs or output elements) of each core on ``tile``: its share's, or all of it on the leader."""
        work = [0] * cores
        split = self.variants[tile.variant]
        if split is None:
            work[0] = tiled.variants[tile.variant].work
            return work
        for core, share in enumerate(split.shares):
            if share is not None:
                work[core] = split.subs[share.sub].work
        return work

    def scratch_stride(self, key: str) -> int:
        """Bytes of scratch ``key`` one core needs across every split variant."""
        return max((sub.scratch.get(key, 0) for split in self.variants if split for sub in split.subs), default=0)


def chunks(extent: int, cores: int) -> list[tuple[int, int]]:
    """[begin, end) of each busy core: contiguous, the first ``extent % n`` one element longer."""
    count = min(cores, extent)
    base, extra = divmod(extent, count)
    bounds, begin = [], 0
    for core in range(count):
        end = begin + base + (1 if core < extra else 0)
        bounds.append((begin, end))
        begin = end
    return bounds


def contiguous_offset(sub: Box, parent: Box) -> int | None:
    """Element offset of ``sub`` in a dense buffer holding ``parent``, or None if ``sub`` is not one run of it."""
    if len(sub) != len(parent):
        return None
    shape = box_shape(parent)
    relative = [(a - pa, b - pa) for (a, b), (pa, _) in zip(sub, parent)]
    if any(not 0 <= a <= b <= dim for (a, b), dim in zip(relative, shape)):
        return None
    partial = [axis for axis, ((a, b), dim) in enumerate(zip(relative, shape)) if (a, b) != (0, dim)]
    if partial and any(b - a != 1 for a, b in relative[:partial[-1]]):
        return None
    return sum(a * stride for (a, _), stride in zip(relative, element_strides(shape)))


def split_layer(tiled: TiledLayer, ctxt: NetworkContext, constraint: TileConstraint, cores: int) -> LayerSplit:
    """Split every variant of ``tiled`` among ``cores`` cores where the layout allows it."""
    result = LayerSplit()
    for number, variant in enumerate(tiled.variants):
        tiles = [tile for tile in tiled.tiles if tile.variant == number]
        split, reason = _split_variant(tiled, ctxt, constraint, cores, tiles)
        result.variants.append(split)
        result.reasons.append(reason)
    return result


def _share_boxes(tiled: TiledLayer, ctxt: NetworkContext, constraint: TileConstraint, out: Box, axis: int,
                 begin: int, end: int) -> tuple[Box, tuple[Box | None, ...]]:
    start = out[axis][0]
    share_out = tuple((start + begin, start + end) if a == axis else r for a, r in enumerate(out))
    return share_out, tuple(constraint.input_boxes(tiled.layer.node, ctxt, share_out))


def _cut(tiled: TiledLayer, ctxt: NetworkContext, constraint: TileConstraint, tile: Tile, axis: int,
         bounds: list[tuple[int, int]]) -> tuple[list[tuple[Box, tuple[Box | None, ...]]], list[ShareLayout]]:
    """The shares' boxes (output, inputs) of one tile, and per share its layout."""
    boxes: list[tuple[Box, tuple[Box | None, ...]]] = []
    layouts: list[ShareLayout] = []
    for begin, end in bounds:
        share_out, share_in = _share_boxes(tiled, ctxt, constraint, tile.outputs[0], axis, begin, end)
        offsets = tuple(contiguous_offset(s, p) if s is not None and p is not None else 0
                        for s, p in zip(share_in, tile.inputs))
        boxes.append((share_out, share_in))
        layouts.append(ShareLayout(offsets, tuple(box_shape(s) if s is not None else None for s in share_in),
                                   constraint.tile_attributes(tiled.layer.node, ctxt, share_out)))
    return boxes, layouts


def _split_variant(tiled: TiledLayer, ctxt: NetworkContext, constraint: TileConstraint, cores: int,
                   tiles: list[Tile]) -> tuple[VariantSplit | None, str]:
    node = tiled.layer.node
    if cores == 1:
        return None, "one core"
    if len([t for t in node.outputs if t.name]) != 1:
        return None, "several outputs"
    reference = tiles[0]
    shape = box_shape(reference.outputs[0])
    axis = next((a for a, dim in enumerate(shape) if dim > 1), None)
    if axis is None:
        return None, "a one-element tile"
    if axis not in constraint.tiled_axes(node, ctxt):
        return None, f"output axis {axis} cannot be cut"
    bounds = chunks(shape[axis], cores)
    boxes, layouts = _cut(tiled, ctxt, constraint, reference, axis, bounds)
    dense: list[tuple[int, ...]] = []
    for layout in layouts:
        offsets = layout.dense_offsets
        if offsets is None:
            return None, "a share's input is not contiguous in its tile"
        dense.append(offsets)
    # Tiles of one variant must cut the same way (same offsets, shapes and attributes).
    if any(_cut(tiled, ctxt, constraint, tile, axis, bounds)[1] != layouts for tile in tiles[1:]):
        return None, "tiles of one kernel variant cut differently"
    subs: list[Variant] = []
    by_key: dict[tuple[str, tuple[tuple[int, ...] | None, ...], tuple[tuple[int, ...], ...]], int] = {}
    shares: list[CoreShare | None] = []
    out_strides = element_strides(shape)
    for (begin, _), (share_out, share_in), input_offsets in zip(bounds, boxes, dense):
        try:
            sub = variant_for_boxes(tiled.layer, ctxt, constraint, share_out, share_in)
        except DeeployError as error:
            return None, f"the kernel rejects a share: {error}"
        key = (sub.code, tuple(sub.input_shapes), tuple(sub.output_shapes))
        index = by_key.setdefault(key, len(subs))
        if index == len(subs):
            subs.append(sub)
        inputs = {i: int(o) for i, o in enumerate(input_offsets) if node.inputs[i].name and share_in[i] is not None}
        shares.append(CoreShare(index, inputs, {0: begin * out_strides[axis]}, sub.work))
    shares += [None] * (cores - len(shares))
    return VariantSplit(axis, subs, shares), ""


def split_summary(split: LayerSplit, cores: int) -> dict[str, object]:
    """For reports: how many cores each variant keeps busy and why a variant is not split."""
    busy = [s.busy_cores if s else 1 for s in split.variants]
    return {
        "cores": cores,
        "busy_cores": busy,
        "not_split": sorted({reason for s, reason in zip(split.variants, split.reasons) if s is None and reason}),
        "mean_busy": math.fsum(busy) / max(len(busy), 1),
    }
