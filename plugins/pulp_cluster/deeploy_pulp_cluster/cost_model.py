"""Estimated cycles of a tiled network on the cluster, from what the compiler knows statically.

The model is deliberately simple and documented (docs/pulp-cluster.rst) so that
users can compare L1 sizes and buffering strategies, not predict silicon:

* a core does ``cycles_per_mac`` cycles per multiply-accumulate (or per output
  element, for kernels without MACs);
* a DMA transfer (one 3-D block) costs ``latency`` cycles plus
  ``bytes / bytes_per_cycle``; transfers of one tile are serialised;
* a tile's compute time is its slowest core's work; a fork and each barrier add
  fixed overheads;
* single buffering: fetch, compute, store one after the other per tile;
  double buffering: a tile's compute overlaps the next tile's fetch and the
  previous tile's store, so each step costs the longer of the two;
* a tensor that lives in L3 moves in two hops, L3 <-> L2 staging (``l3_l2``
  link) and one dense L2 <-> L1 transfer; with single buffering of the L3 hop
  both hops are part of the tile's fetch or store, with double buffering the
  L3 controller works alongside the cluster: each step costs at least the next
  tile's L3 fetch plus the previous tile's L3 store.

The same byte and transfer counts are measured by the emulator
(``pulp_print_stats``); the tests check that prediction and measurement agree.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from deeploy_core.plugin_api import TilingView


@dataclass(frozen=True)
class DmaLink:
    """One level pair's DMA: fixed cycles per transfer and sustained bytes per cycle."""

    latency: int
    bytes_per_cycle: float

    def cycles(self, bytes_moved: int, transfers: int) -> float:
        return transfers * self.latency + bytes_moved / self.bytes_per_cycle


@dataclass(frozen=True)
class CostModel:
    """Cycle costs of the cluster (defaults: a PULP-like cluster at the same clock for cores and DMA)."""

    cycles_per_mac: float = 1.0
    l2_l1: DmaLink = DmaLink(latency=30, bytes_per_cycle=8.0)
    l3_l2: DmaLink = DmaLink(latency=300, bytes_per_cycle=1.0)
    fork_cycles: int = 200
    barrier_cycles: int = 20

    def describe(self) -> dict[str, Any]:
        return asdict(self)


def element_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides of ``shape`` in elements."""
    strides = [1] * len(shape)
    for axis in range(len(shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    return tuple(strides)


def box_transfers(box: tuple[int, ...], tensor_shape: tuple[int, ...], element_bytes: int) -> int:
    """DMA transfers the runtime issues for one box (mirrors ``simplify`` in dc_pulp_transfer.c)."""
    if any(extent == 0 for extent in box):
        return 0
    strides = element_strides(tuple(tensor_shape))
    extents = [extent for extent in box if extent != 1]
    byte_strides = [strides[axis] * element_bytes for axis, extent in enumerate(box) if extent != 1]
    if not extents or byte_strides[-1] != element_bytes:
        extents.append(1)
        byte_strides.append(element_bytes)
    extents[-1] *= byte_strides[-1]
    byte_strides[-1] = 1
    merged_extents, merged_strides = [extents[-1]], [1]
    for extent, stride in zip(reversed(extents[:-1]), reversed(byte_strides[:-1])):
        if stride == merged_extents[0] * merged_strides[0]:
            merged_extents[0] *= extent
        else:
            merged_extents.insert(0, extent)
            merged_strides.insert(0, stride)
    outer = len(merged_extents) - min(len(merged_extents), 3)
    return math.prod(merged_extents[:outer])


@dataclass
class LayerEstimate:
    """Predicted DMA traffic, per-core work and cycles of one tiled layer for one inference."""

    layer: str
    tiles: int
    bytes_in: int
    bytes_out: int
    transfers_in: int
    transfers_out: int
    outer_bytes_in: int
    """Bytes moved L3 -> L2 (staging) for the layer's tensors in L3."""
    outer_bytes_out: int
    outer_transfers_in: int
    outer_transfers_out: int
    work: list[int]
    compute_cycles: float
    dma_cycles: float
    cycles: float

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "compute_cycles": round(self.compute_cycles), "dma_cycles": round(self.dma_cycles),
                "cycles": round(self.cycles)}


def _moved(tensor: TilingView.Tensor, tile: int) -> tuple[int, int]:
    """Bytes and DMA transfers of ``tensor``'s box in tile ``tile`` between its home and L1."""
    box = tensor.boxes[tile]
    if box is None:
        return 0, 0
    return tensor.bytes_of(tile), box_transfers(box, tensor.shape, tensor.element_bytes)


def _dense(tensor: TilingView.Tensor, tile: int) -> int:
    """Transfers of a box between a staging buffer and L1 (both dense: one, none for an empty box)."""
    box = tensor.boxes[tile]
    return 0 if box is None else box_transfers(box, box, 1)


def estimate_layer(layer: TilingView.Layer, model: CostModel, cores: int) -> LayerEstimate:
    """One layer's figures.  A layer of a fused pattern other than its last runs inside the fork of its pattern
    (``layer.forked`` False); a tensor beyond home moves in two hops, staged through L2."""
    pipelined = layer.staging_pipelined
    work = [0] * cores
    fetch_cost, store_cost, compute_cost, outer_fetch_cost, outer_store_cost = [], [], [], [], []
    bytes_in = bytes_out = transfers_in = transfers_out = 0
    outer_in = outer_out = outer_transfers_in = outer_transfers_out = 0
    resident_cycles = 0.0
    for number, tile_work in enumerate(layer.core_work):
        fetch = store = outer_fetch = outer_store = 0.0
        for tensor in layer.inputs:
            if tensor.boxes[number] is None:
                continue  # a fused pattern's intermediate, a constant read in place, a resident input already in L1
            size, count = _moved(tensor, number)
            if tensor.staged:  # L3 -> L2 staging as the box needs, then one dense L2 -> L1 transfer
                outer_in, outer_transfers_in = outer_in + size, outer_transfers_in + count
                hop = model.l3_l2.cycles(size, count)
                if tensor.resident:
                    resident_cycles += hop
                elif pipelined:
                    outer_fetch += hop
                else:
                    fetch += hop
                count = _dense(tensor, number)
            bytes_in, transfers_in = bytes_in + size, transfers_in + count
            if tensor.resident:
                resident_cycles += model.l2_l1.cycles(size, count)
            else:
                fetch += model.l2_l1.cycles(size, count)
        for tensor in layer.outputs:
            if tensor.boxes[number] is None:
                continue  # read from L1 by the fused pattern's next layer
            size, count = _moved(tensor, number)
            if tensor.staged:  # one dense L1 -> L2 staging transfer, then L2 -> L3 as the box needs
                outer_out, outer_transfers_out = outer_out + size, outer_transfers_out + count
                hop = model.l3_l2.cycles(size, count)
                outer_store, store = (outer_store + hop, store) if pipelined else (outer_store, store + hop)
                count = _dense(tensor, number)
            bytes_out, transfers_out = bytes_out + size, transfers_out + count
            store += model.l2_l1.cycles(size, count)
        work = [a + b for a, b in zip(work, tile_work)]
        fetch_cost.append(fetch)
        store_cost.append(store)
        outer_fetch_cost.append(outer_fetch)
        outer_store_cost.append(outer_store)
        compute_cost.append(max(tile_work) * model.cycles_per_mac + 2 * model.barrier_cycles)
    dma = resident_cycles + sum(fetch_cost) + sum(store_cost) + sum(outer_fetch_cost) + sum(outer_store_cost)
    if layer.slots == 1:
        steps = [f + c + s for f, c, s in zip(fetch_cost, compute_cost, store_cost)]
        cycles = resident_cycles
    else:
        steps = [max(compute, (fetch_cost[t + 1] if t + 1 < len(fetch_cost) else 0.0)
                     + (store_cost[t - 1] if t else 0.0)) for t, compute in enumerate(compute_cost)]
        cycles = resident_cycles + fetch_cost[0] + store_cost[-1]
    if pipelined:  # the L3 controller runs beside the cluster: the next tile's L3 fetch, the last tile's L3 store
        steps = [max(step, (outer_fetch_cost[t + 1] if t + 1 < len(steps) else 0.0)
                     + (outer_store_cost[t - 1] if t else 0.0)) for t, step in enumerate(steps)]
        cycles += outer_fetch_cost[0] + outer_store_cost[-1]
    cycles += sum(steps)
    cycles += (model.fork_cycles if layer.forked else 0) + model.barrier_cycles
    return LayerEstimate(layer.name, layer.tiles, bytes_in, bytes_out, transfers_in, transfers_out,
                         outer_in, outer_out, outer_transfers_in, outer_transfers_out, work, sum(compute_cost), dma,
                         cycles)


def estimate_network(tiling: TilingView, model: CostModel) -> dict[str, Any]:
    """The ``estimate`` section of report.json: per layer and in total."""
    cores = tiling.cores
    layers = [estimate_layer(layer, model, cores) for layer in tiling.layers]
    outer, home = tiling.outer_level, tiling.home_level
    links = {} if outer is None else {f"{outer}->{home}": ("outer_bytes_in", "outer_transfers_in"),
                                      f"{home}->{outer}": ("outer_bytes_out", "outer_transfers_out")}
    return {
        "model": model.describe(),
        "cores": cores,
        "cycles": round(sum(layer.cycles for layer in layers)),
        "dma_bytes": {"L2->L1": sum(layer.bytes_in for layer in layers),
                      "L1->L2": sum(layer.bytes_out for layer in layers),
                      **{link: sum(getattr(layer, figures[0]) for layer in layers) for link, figures in links.items()}},
        "dma_transfers": {"L2->L1": sum(layer.transfers_in for layer in layers),
                          "L1->L2": sum(layer.transfers_out for layer in layers),
                          **{link: sum(getattr(layer, figures[1]) for layer in layers)
                             for link, figures in links.items()}},
        "macs_per_core": [sum(layer.work[c] for layer in layers) for c in range(cores)],
        "layers": [layer.to_json() for layer in layers],
    }
