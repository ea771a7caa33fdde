"""C code of a tiled layer: the tile table, fetch/store functions, the inline kernels and the schedule.

Layout of one layer in the compute level (offsets from the level's static
memory map): the tile table (copied in at the start of the layer, because the
loop reads it from there), one buffer per input/output tile and buffering
slot, and the kernels' scratch.  Each table row is ``variant, input offsets…,
output offsets…`` (element offsets of the box starts in the home tensors).

Schedules:

* single buffering: fetch tile t, wait, compute, store, wait;
* double buffering: the fetch of tile t+1 into the other slot is started
  before tile t is computed; a slot's store is waited for before the slot is
  computed into again.

Tensors whose box is the same for every tile (weights of a spatially tiled
convolution, scalars) are *resident*: fetched once before the loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.tiles import TiledLayer, tile_input_name, tile_output_name, tile_scratch_name
from deeploy_core.tiling.transfers import TransferPrimitives

MAX_RANK = 8


def element_strides(shape: tuple[int, ...]) -> list[int]:
    strides, running = [0] * len(shape), 1
    for axis in range(len(shape) - 1, -1, -1):
        strides[axis] = running
        running *= shape[axis]
    return strides


def _int_array(values: list[int] | tuple[int, ...]) -> str:
    return "(const int32_t[]){" + (", ".join(str(int(v)) for v in values) or "0") + "}"


@dataclass
class LayerLayout:
    """Where one tiled layer's buffers sit in the compute level (byte offsets) and what it moves."""

    table_offset: int
    table_bytes: int
    inputs: dict[int, tuple[int, int]] = field(default_factory=dict)
    """input index → (offset, bytes per slot)."""
    outputs: dict[int, tuple[int, int]] = field(default_factory=dict)
    scratch: dict[str, int] = field(default_factory=dict)
    resident: set[int] = field(default_factory=set)
    slots: int = 1
    peak: int = 0


def resident_inputs(tiled: TiledLayer) -> set[int]:
    """Inputs whose box never changes from tile to tile."""
    resident = set()
    for index, tensor in enumerate(tiled.layer.node.inputs):
        if not tensor.name:
            continue
        boxes = {tile.inputs[index] for tile in tiled.tiles}
        if len(boxes) == 1:
            resident.add(index)
    return resident


def table_columns(tiled: TiledLayer) -> int:
    return 1 + len(tiled.layer.node.inputs) + len(tiled.tiles[0].outputs)


def table_rows(tiled: TiledLayer, ctxt: NetworkContext) -> list[list[int]]:
    node = tiled.layer.node
    rows = []
    for tile in tiled.tiles:
        row = [tile.variant]
        for index, box in enumerate(tile.inputs):
            if box is None:
                row.append(0)
                continue
            strides = element_strides(ctxt[node.inputs[index].name].shape)
            row.append(sum(start * stride for (start, _), stride in zip(box, strides)))
        outputs = [t for t in node.outputs if t.name]
        for index, box in enumerate(tile.outputs):
            strides = element_strides(ctxt[outputs[index].name].shape)
            row.append(sum(start * stride for (start, _), stride in zip(box, strides)))
        rows.append(row)
    return rows


def bytes_moved(tiled: TiledLayer, ctxt: NetworkContext) -> tuple[int, int]:
    """(bytes fetched into the compute level, bytes stored back) for one inference."""
    node = tiled.layer.node
    resident = resident_inputs(tiled)
    fetched = stored = 0
    for index, tensor in enumerate(node.inputs):
        if not tensor.name:
            continue
        size = ctxt[tensor.name].dtype.size
        boxes = [tile.inputs[index] for tile in tiled.tiles]
        if index in resident:
            boxes = boxes[:1]
        fetched += sum(math.prod(b - a for a, b in box) * size for box in boxes if box is not None)
    outputs = [t for t in node.outputs if t.name]
    for index, tensor in enumerate(outputs):
        size = ctxt[tensor.name].dtype.size
        stored += sum(math.prod(b - a for a, b in tile.outputs[index]) * size for tile in tiled.tiles)
    return fetched, stored


def emit_tiled_layer(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, primitives: TransferPrimitives,
                     level_pointer: str, prefix: str, shared: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """(body for RunNetwork, file-scope definitions) of one tiled layer.

    ``shared`` maps function texts (with the name blanked) to the function
    already emitted for them, so identical transfer functions are emitted once.
    """
    node = tiled.layer.node
    outputs = [t for t in node.outputs if t.name]
    columns = table_columns(tiled)
    rows = table_rows(tiled, ctxt)
    future = primitives.future_type
    n_in, n_out = len(node.inputs), len(outputs)

    def slot_pointer(offset: int, stride: int, slot: str, c_type: str) -> str:
        return f"(({c_type} *)({level_pointer} + {offset} + {slot} * {stride}))"

    def transfer(template: str, index: int, is_input: bool, variant_index: int, slot: str, futures: str) -> str:
        tensor = ctxt[(node.inputs if is_input else outputs)[index].name]
        variant = tiled.variants[variant_index]
        shape = variant.input_shapes[index] if is_input else variant.output_shapes[index]
        if shape is None:
            return ""
        if len(shape) > MAX_RANK:
            raise DeeployError(f"layer {tiled.layer.name!r}: tiles of rank {len(shape)} > {MAX_RANK} are not supported")
        offset, stride = (layout.inputs if is_input else layout.outputs)[index]
        column = 1 + index if is_input else 1 + n_in + index
        return template.format(
            future=f"{futures}[{index}]",
            tile=slot_pointer(offset, stride, slot, "uint8_t"),
            tensor=f"((uint8_t *){tensor.c_name} + (int64_t)row[{column}] * {tensor.dtype.size})",
            element_bytes=tensor.dtype.size,
            rank=len(shape),
            box=_int_array(shape),
            strides=_int_array(element_strides(tensor.shape)),
        )

    definitions = [f"/* {tiled.layer.name} ({tiled.layer.op_type}): {len(tiled.tiles)} tiles, "
                   f"{len(tiled.variants)} kernel variants */"]
    definitions.append(
        f"static const int32_t {prefix}_tiles[{len(rows) * columns}] = {{\n    "
        + ",\n    ".join(", ".join(str(v) for v in row) for row in rows) + "\n};"
    )
    fetch_cases, compute_cases, store_cases, resident_cases = [], [], [], []
    for number, variant in enumerate(tiled.variants):
        fetch = [transfer(primitives.to_tile, i, True, number, "slot", "futures")
                 for i in range(n_in) if node.inputs[i].name and i not in layout.resident]
        resident = [transfer(primitives.to_tile, i, True, number, "0", "futures")
                    for i in sorted(layout.resident)]
        store = [transfer(primitives.from_tile, i, False, number, "slot", "futures") for i in range(n_out)]
        pointers = []
        for i, tensor in enumerate(node.inputs):
            if not tensor.name:
                continue
            offset, stride = layout.inputs[i]
            slot = "0" if i in layout.resident else "slot"
            c_type = ctxt[tensor.name].dtype.c_type
            pointers.append(f"{c_type} *{tile_input_name(i)} = {slot_pointer(offset, stride, slot, c_type)};")
        for i, tensor in enumerate(outputs):
            offset, stride = layout.outputs[i]
            c_type = ctxt[tensor.name].dtype.c_type
            pointers.append(f"{c_type} *{tile_output_name(i)} = {slot_pointer(offset, stride, 'slot', c_type)};")
        for key in sorted(variant.scratch):
            pointers.append(f"uint8_t *{tile_scratch_name(key)} = ({level_pointer} + {layout.scratch[key]});")
        names_declared = [line.split("=")[0].split("*")[-1].strip() for line in pointers]
        silence_pointers = " ".join(f"(void){name};" for name in names_declared)  # parameters read at compile time
        body = "\n".join(pointers + ([silence_pointers] if silence_pointers else []) + [variant.code])
        fetch_cases.append(f"    case {number}:\n" + "".join(f"        {line}\n" for line in fetch) + "        break;")
        resident_cases.append(f"    case {number}:\n" + "".join(f"        {line}\n" for line in resident) + "        break;")
        store_cases.append(f"    case {number}:\n" + "".join(f"        {line}\n" for line in store) + "        break;")
        compute_cases.append(f"    case {number}: {{\n" + "".join(f"        {line}\n" for line in body.splitlines())
                             + "        break;\n    }")
    unused = "(void)row; (void)slot; (void)futures;"
    names: dict[str, str] = {}
    shared = {} if shared is None else shared
    for name, cases, signature in (
        ("fetch", fetch_cases, f"const int32_t *row, int32_t slot, {future} *futures"),
        ("fetch_resident", resident_cases, f"const int32_t *row, int32_t slot, {future} *futures"),
        ("store", store_cases, f"const int32_t *row, int32_t slot, {future} *futures"),
    ):
        text = (f"static void @NAME@({signature}) {{\n    {unused}\n    switch (row[0]) {{\n"
                + "\n".join(cases) + "\n    default:\n        break;\n    }\n}")
        if text in shared:
            names[name] = shared[text]
            continue
        names[name] = shared[text] = f"{prefix}_{name}"
        definitions.append(text.replace("@NAME@", names[name]))
    # The kernels run inline in the tile loop: as separate functions, GCC 12 (-O2) wrongly proved their calls
    # dead (its summary of a function whose loops address the compute level through two element types).
    compute = ["switch (row[0]) {", *compute_cases, "default:", "    break;", "}"]
    wait_inputs = [primitives.wait.format(future=f"in_futures[{{slot}}][{i}]") for i in range(n_in)
                   if node.inputs[i].name and i not in layout.resident]
    wait_resident = [primitives.wait.format(future=f"resident_futures[{i}]") for i in sorted(layout.resident)]
    wait_outputs = [primitives.wait.format(future=f"out_futures[{{slot}}][{i}]") for i in range(n_out)]
    count = len(tiled.tiles)
    lines = [
        "{",
        f"    /* {tiled.layer.name}: {count} tiles, {'double' if layout.slots == 2 else 'single'} buffering */",
        f"    uint8_t *table_bytes = {level_pointer} + {layout.table_offset};",
        f"    for (int32_t i = 0; i < {layout.table_bytes}; ++i) table_bytes[i] = ((const uint8_t *){prefix}_tiles)[i];",
        "    const int32_t *table = (const int32_t *)table_bytes;",
        f"    {future} in_futures[2][{max(n_in, 1)}] = {{{{0}}}}, out_futures[2][{max(n_out, 1)}] = {{{{0}}}}, "
        f"resident_futures[{max(n_in, 1)}] = {{0}};",
        f"    {names['fetch_resident']}(table, 0, resident_futures);",
        *[f"    {w}" for w in wait_resident],
    ]
    if layout.slots == 1:
        lines += [
            f"    for (int32_t t = 0; t < {count}; ++t) {{",
            f"        const int32_t *row = table + t * {columns};",
            f"        {names['fetch']}(row, 0, in_futures[0]);",
            *[f"        {w.format(slot=0)}" for w in wait_inputs],
            "        const int32_t slot = 0;",
            *[f"        {line}" for block in compute for line in block.splitlines()],
            f"        {names['store']}(row, 0, out_futures[0]);",
            *[f"        {w.format(slot=0)}" for w in wait_outputs],
            "    }",
        ]
    else:
        lines += [
            f"    {names['fetch']}(table, 0, in_futures[0]);",
            f"    for (int32_t t = 0; t < {count}; ++t) {{",
            "        const int32_t slot = t & 1;",
            f"        const int32_t *row = table + t * {columns};",
            *[f"        {w.format(slot='slot')}" for w in wait_inputs],
            f"        if (t + 1 < {count}) {names['fetch']}(row + {columns}, slot ^ 1, in_futures[slot ^ 1]);",
            "        if (t >= 2) {",
            *[f"            {w.format(slot='slot')}" for w in wait_outputs],
            "        }",
            *[f"        {line}" for block in compute for line in block.splitlines()],
            f"        {names['store']}(row, slot, out_futures[slot]);",
            "    }",
            *[f"    {w.format(slot=s)}" for s in (0, 1) for w in wait_outputs],
        ]
    lines.append("}")
    return "\n".join(lines), definitions
