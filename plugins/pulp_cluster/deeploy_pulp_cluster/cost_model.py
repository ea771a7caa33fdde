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
  previous tile's store, so each step costs the longer of the two.

The same byte and transfer counts are measured by the emulator
(``pulp_print_stats``); the tests check that prediction and measurement agree.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from deeploy_core.plugin_api import LayerLayout, LayerSplit, NetworkContext, TiledLayer, box_shape, element_strides


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
    work: list[int]
    compute_cycles: float
    dma_cycles: float
    cycles: float

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "compute_cycles": round(self.compute_cycles), "dma_cycles": round(self.dma_cycles),
                "cycles": round(self.cycles)}


def estimate_layer(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, split: LayerSplit | None,
                   cores: int, model: CostModel, forked: bool = True) -> LayerEstimate:
    """One layer's figures; ``forked`` False for a layer of a fused pattern other than its last, which runs inside
    the fork of its pattern (and moves nothing for its intermediate tiles)."""
    node = tiled.layer.node
    outputs = [t for t in node.outputs if t.name]

    def moved(index: int, box: tuple[tuple[int, int], ...] | None, is_input: bool) -> tuple[int, int]:
        if box is None:
            return 0, 0
        tensor = ctxt[(node.inputs if is_input else outputs)[index].name]
        shape = box_shape(box)
        return math.prod(shape) * tensor.dtype.size, box_transfers(shape, tensor.shape, tensor.dtype.size)

    work = [0] * cores
    fetch_cost, store_cost, compute_cost = [], [], []
    bytes_in = bytes_out = transfers_in = transfers_out = 0
    resident_cycles = 0.0
    for number, tile in enumerate(tiled.tiles):
        fetch = store = 0.0
        for index, box in enumerate(tile.inputs):
            if not node.inputs[index].name or (index in layout.resident and number > 0) or index in layout.local_inputs:
                continue  # a fused pattern's intermediate tile is already in L1: nothing moves
            size, count = moved(index, box, True)
            bytes_in, transfers_in = bytes_in + size, transfers_in + count
            if index in layout.resident:
                resident_cycles += model.l2_l1.cycles(size, count)
            else:
                fetch += model.l2_l1.cycles(size, count)
        for index, box in enumerate(tile.outputs):
            if index in layout.local_outputs:
                continue
            size, count = moved(index, box, False)
            bytes_out, transfers_out = bytes_out + size, transfers_out + count
            store += model.l2_l1.cycles(size, count)
        tile_work = (split or LayerSplit([None] * len(tiled.variants))).tile_work(tiled, tile, cores)
        work = [a + b for a, b in zip(work, tile_work)]
        fetch_cost.append(fetch)
        store_cost.append(store)
        compute_cost.append(max(tile_work) * model.cycles_per_mac + 2 * model.barrier_cycles)
    dma = resident_cycles + sum(fetch_cost) + sum(store_cost)
    if layout.slots == 1:
        cycles = resident_cycles + sum(f + c + s for f, c, s in zip(fetch_cost, compute_cost, store_cost))
    else:
        cycles = resident_cycles + fetch_cost[0] + store_cost[-1]
        for t, compute in enumerate(compute_cost):
            overlapped = (fetch_cost[t + 1] if t + 1 < len(fetch_cost) else 0.0) + (store_cost[t - 1] if t else 0.0)
            cycles += max(compute, overlapped)
    cycles += (model.fork_cycles if forked else 0) + model.barrier_cycles
    return LayerEstimate(tiled.layer.name, len(tiled.tiles), bytes_in, bytes_out, transfers_in, transfers_out, work,
                         sum(compute_cost), dma, cycles)


def estimate_network(tiled_layers: list[TiledLayer], ctxt: NetworkContext, layouts: dict[str, LayerLayout],
                     splits: dict[str, LayerSplit], cores: int, model: CostModel) -> dict[str, Any]:
    """The ``estimate`` section of report.json: per layer and in total."""
    layers = [estimate_layer(t, ctxt, layouts[t.layer.c_name], splits.get(t.layer.c_name), cores, model,
                             forked=not layouts[t.layer.c_name].local_outputs) for t in tiled_layers]
    return {
        "model": model.describe(),
        "cores": cores,
        "cycles": round(sum(layer.cycles for layer in layers)),
        "dma_bytes": {"L2->L1": sum(layer.bytes_in for layer in layers),
                      "L1->L2": sum(layer.bytes_out for layer in layers)},
        "dma_transfers": {"L2->L1": sum(layer.transfers_in for layer in layers),
                          "L1->L2": sum(layer.transfers_out for layer in layers)},
        "macs_per_core": [sum(layer.work[c] for layer in layers) for c in range(cores)],
        "layers": [layer.to_json() for layer in layers],
    }
