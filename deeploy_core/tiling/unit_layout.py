"""The compute-level blocks of one tiling unit (a layer tiled alone, or a fused pattern) and its layouts.

A layer tiled alone has the blocks ``table``, ``in<i>``, ``out<i>`` and
``scratch:<key>``, all live while it runs.  A fused pattern has every
layer's blocks at once, named ``<position>.<block>``, except that an
intermediate tensor has one block, its producer's ``out0``, which the
consumer's input reads in place.  Placing the blocks is the allocator's job
(the tiler wrapper); this module says what the blocks are and turns their
offsets into each layer's :class:`~deeploy_core.tiling.layer_layout.LayerLayout`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from deeploy_core.ir import NetworkContext
from deeploy_core.midend.memory_plan import align_up
from deeploy_core.tiling.fusion.pattern import FusedPattern
from deeploy_core.tiling.layer_layout import LayerLayout, resident_inputs
from deeploy_core.tiling.parallel import LayerSplit
from deeploy_core.tiling.tile_table import table_columns
from deeploy_core.tiling.tiles import TiledLayer


@dataclass
class UnitBlocks:
    """Block sizes by allocation id, and which id each layer's own block names map to."""

    sizes: dict[str, int] = field(default_factory=dict)
    requested: dict[str, int] = field(default_factory=dict)
    """Bytes each block was asked for, before alignment (the report's scratch figure)."""
    ids: list[dict[str, str]] = field(default_factory=list)
    """Per layer of the unit: its block name (``in0``, ``table``, …) → allocation id."""
    strides: list[dict[str, int]] = field(default_factory=list)
    residents: list[set[int]] = field(default_factory=list)
    locals_in: list[set[int]] = field(default_factory=list)
    locals_out: list[set[int]] = field(default_factory=list)
    home_inputs: list[set[int]] = field(default_factory=list)
    """Per layer of the unit, the inputs it reads in place from the home level (no block)."""


def tiling_units(tiled_layers: Sequence[TiledLayer], patterns: Sequence[FusedPattern]
                 ) -> list[tuple[list[TiledLayer], FusedPattern | None]]:
    """The tiled layers grouped into units, in execution order: each fused pattern, and every other layer alone."""
    pattern_of = {name: pattern for pattern in patterns for name in pattern.names}
    units: list[tuple[list[TiledLayer], FusedPattern | None]] = []
    for tiled in tiled_layers:
        pattern = pattern_of.get(tiled.layer.c_name)
        if pattern is not None and units and units[-1][1] is pattern:
            units[-1][0].append(tiled)
        else:
            units.append(([tiled], pattern))
    return units


def unit_blocks(members: Sequence[TiledLayer], pattern: FusedPattern | None, ctxt: NetworkContext, alignment: int,
                slots: int, splits: dict[str, LayerSplit], scratch_copies: int,
                home_tables: set[str] | None = None, home_inputs: dict[str, set[int]] | None = None) -> UnitBlocks:
    """The blocks of one unit; a unit of one layer keeps the plain block names as allocation ids.

    A layer in ``home_tables`` has no table block: its table is read in place from the home level; nor do the
    inputs ``home_inputs`` lists for it (by C name), which it reads in place too.
    """
    unit = UnitBlocks()
    single = len(members) == 1
    for position, tiled in enumerate(members):
        node = tiled.layer.node
        local_in = pattern.local_inputs(position) if pattern is not None else set()
        local_out = pattern.local_outputs(position) if pattern is not None else set()
        in_place = (home_inputs or {}).get(tiled.layer.c_name, set())
        resident = resident_inputs(tiled) - local_in - in_place
        ids: dict[str, str] = {}

        def add(name: str, size: int) -> None:
            block = name if single else f"{position}.{name}"
            ids[name] = block
            unit.sizes[block] = align_up(max(size, 1), alignment)
            unit.requested[block] = size

        if tiled.layer.c_name not in (home_tables or set()):
            add("table", 4 * table_columns(tiled) * len(tiled.tiles))
        for index, tensor in enumerate(node.inputs):
            if not tensor.name or index in in_place:
                continue
            if index in local_in:  # read in place from the producer's output block
                ids[f"in{index}"] = unit.ids[position - 1]["out0"]
                continue
            per_slot = align_up(max(tiled.input_tile_bytes(index, ctxt), 1), alignment)
            add(f"in{index}", per_slot * (1 if index in resident else slots))
        for index, _ in enumerate([t for t in node.outputs if t.name]):
            copies = 1 if index in local_out else slots
            add(f"out{index}", align_up(max(tiled.output_tile_bytes(index, ctxt), 1), alignment) * copies)
        split = splits.get(tiled.layer.c_name)
        strides: dict[str, int] = {}
        for key in sorted({k for v in tiled.variants for k in v.scratch}):
            size = max(v.scratch.get(key, 0) for v in tiled.variants)
            if split is not None and split.scratch_stride(key):
                strides[key] = align_up(split.scratch_stride(key), alignment)
                size = max(size, strides[key] * scratch_copies)
            add(f"scratch:{key}", size)
        unit.ids.append(ids)
        unit.strides.append(strides)
        unit.residents.append(resident)
        unit.locals_in.append(local_in)
        unit.locals_out.append(local_out)
        unit.home_inputs.append(in_place)
    return unit


def unit_layouts(members: Sequence[TiledLayer], unit: UnitBlocks, offsets: dict[str, int], ctxt: NetworkContext,
                 alignment: int, slots: int) -> list[LayerLayout]:
    """Each layer's layout from the unit's block offsets; every layout's peak is the unit's."""
    peak = max(offsets[block] + size for block, size in unit.sizes.items())
    layouts = []
    for position, tiled in enumerate(members):
        node = tiled.layer.node
        ids = unit.ids[position]
        scratch_ids = {name: block for name, block in ids.items() if name.startswith("scratch:")}
        layout = LayerLayout(offsets[ids["table"]] if "table" in ids else None, 4 * table_columns(tiled) * len(tiled.tiles), slots=slots,
                             resident=unit.residents[position], scratch_strides=unit.strides[position],
                             scratch_bytes=sum(unit.requested[block] for block in scratch_ids.values()),
                             local_inputs=unit.locals_in[position], local_outputs=unit.locals_out[position],
                             home_inputs=unit.home_inputs[position])
        for index, tensor in enumerate(node.inputs):
            if tensor.name and index not in layout.home_inputs:
                layout.inputs[index] = (offsets[ids[f"in{index}"]],
                                        align_up(max(tiled.input_tile_bytes(index, ctxt), 1), alignment))
        for index, _ in enumerate([t for t in node.outputs if t.name]):
            layout.outputs[index] = (offsets[ids[f"out{index}"]],
                                     align_up(max(tiled.output_tile_bytes(index, ctxt), 1), alignment))
        for name, block in scratch_ids.items():
            layout.scratch[name.split(":", 1)[1]] = offsets[block]
        layout.peak = peak
        layouts.append(layout)
    return layouts
