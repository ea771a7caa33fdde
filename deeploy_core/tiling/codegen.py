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
from typing import TYPE_CHECKING

from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.ir.names import c_comment_text
from deeploy_core.tiling.staging import LayerStaging, synchronous_fetch, synchronous_store
from deeploy_core.tiling.strides import element_strides
from deeploy_core.tiling.tiles import TiledLayer, Variant, tile_input_name, tile_output_name, tile_scratch_name
from deeploy_core.tiling.transfers import TransferPrimitives

if TYPE_CHECKING:
    from deeploy_core.tiling.parallel import ClusterParallelism, LayerSplit, VariantSplit

MAX_RANK = 8


def _int_array(values: list[int] | tuple[int, ...]) -> str:
    return "(const int32_t[]){" + (", ".join(str(int(v)) for v in values) or "0") + "}"


@dataclass
class LayerLayout:
    """Where one tiled layer's buffers sit in the compute level (byte offsets) and what it moves."""

    table_offset: int | None
    """Where the table's copy sits in the compute level; None: the table is read in place from the home level."""
    table_bytes: int
    inputs: dict[int, tuple[int, int]] = field(default_factory=dict)
    """input index → (offset, bytes per slot)."""
    outputs: dict[int, tuple[int, int]] = field(default_factory=dict)
    scratch: dict[str, int] = field(default_factory=dict)
    scratch_strides: dict[str, int] = field(default_factory=dict)
    """scratch key → bytes between two cores' copies (cluster platforms; 0 or absent: one copy)."""
    scratch_bytes: int = 0
    """Compute-level bytes of the kernel's scratch (its largest tile's, every core's copy): report.json's figure."""
    resident: set[int] = field(default_factory=set)
    local_inputs: set[int] = field(default_factory=set)
    """Inputs a fused pattern's previous layer computes into the compute level: one buffer, never fetched."""
    local_outputs: set[int] = field(default_factory=set)
    """Outputs the pattern's next layer reads from the compute level: one buffer, never stored."""
    home_inputs: set[int] = field(default_factory=set)
    """Constant inputs the kernel reads in place from the home level (:mod:`deeploy_core.tiling.home_inputs`):
    no buffer in the compute level, never fetched."""
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


def table_lines(layout: LayerLayout, prefix: str, level_pointer: str, suffix: str = "") -> tuple[list[str], list[str]]:
    """The declaration of ``table{suffix}`` and the statements filling it (the leader's, on a cluster).

    The table is copied into the compute level at the start of the layer, or
    (``layout.table_offset`` None) read in place from its constant array.
    """
    if layout.table_offset is None:
        return [f"const int32_t *table{suffix} = {prefix}_tiles;"], []
    declaration = [f"uint8_t *table_bytes{suffix} = {level_pointer} + {layout.table_offset};",
                   f"const int32_t *table{suffix} = (const int32_t *)table_bytes{suffix};"]
    copy = [f"for (int32_t i = 0; i < {layout.table_bytes}; ++i) "
            f"table_bytes{suffix}[i] = ((const uint8_t *){prefix}_tiles)[i];"]
    return declaration, copy


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


def bytes_moved(tiled: TiledLayer, ctxt: NetworkContext, local_inputs: frozenset[int] | set[int] = frozenset(),
                local_outputs: frozenset[int] | set[int] = frozenset()) -> tuple[int, int]:
    """(bytes fetched into the compute level, bytes stored back) for one inference; a fused pattern's
    intermediate tiles (``local_inputs``/``local_outputs``) move nothing, nor do inputs read in place (pass
    them in ``local_inputs`` too)."""
    node = tiled.layer.node
    resident = resident_inputs(tiled)
    fetched = stored = 0
    for index, tensor in enumerate(node.inputs):
        if not tensor.name or index in local_inputs:
            continue
        size = ctxt[tensor.name].dtype.size
        boxes = [tile.inputs[index] for tile in tiled.tiles]
        if index in resident:
            boxes = boxes[:1]
        fetched += sum(math.prod(b - a for a, b in box) * size for box in boxes if box is not None)
    outputs = [t for t in node.outputs if t.name]
    for index, tensor in enumerate(outputs):
        if index in local_outputs:
            continue
        size = ctxt[tensor.name].dtype.size
        stored += sum(math.prod(b - a for a, b in tile.outputs[index]) * size for tile in tiled.tiles)
    return fetched, stored


@dataclass
class LayerParts:
    """The pieces of one tiled layer's code a schedule is assembled from."""

    definitions: list[str]
    names: dict[str, str]
    """``fetch``, ``fetch_resident`` and ``store``: the transfer functions' C names."""
    compute_lines: list[str]
    wait_inputs: list[str]
    """Waits for the streamed inputs, with ``{slot}`` left to fill in."""
    wait_resident: list[str]
    wait_outputs: list[str]
    columns: int
    n_in: int
    n_out: int


def layer_parts(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, primitives: TransferPrimitives,
                level_pointer: str, prefix: str, shared: dict[str, str], parallel: ClusterParallelism | None,
                split: LayerSplit | None, futures: str = "", staging: LayerStaging | None = None) -> LayerParts:
    """Table, transfer functions, kernels and waits of one tiled layer.

    Inputs and outputs in ``layout.local_inputs``/``local_outputs`` (a fused
    pattern's intermediate tiles) are neither fetched nor stored: their one
    buffer stays in the compute level.  ``futures`` suffixes the names of the
    future arrays the waits use, so several layers can share one loop.
    Tensors in ``staging`` live beyond the home level: their transfers take
    both hops through their staging buffer, the outer one waited for at once
    (:mod:`deeploy_core.tiling.staging`).
    """
    node = tiled.layer.node
    outputs = [t for t in node.outputs if t.name]
    columns = table_columns(tiled)
    rows = table_rows(tiled, ctxt)
    n_in, n_out = len(node.inputs), len(outputs)
    fixed = layout.resident | layout.local_inputs | layout.home_inputs

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
        home = f"((uint8_t *){tensor.c_name} + (int64_t)row[{column}] * {tensor.dtype.size})"
        buffer = None if staging is None else (staging.inputs if is_input else staging.outputs).get(index)
        if buffer is not None:
            hops = synchronous_fetch if is_input else synchronous_store
            return "\n        ".join(hops(primitives, f"{futures}[{index}]", slot_pointer(offset, stride, slot, "uint8_t"),
                                           buffer.pointer("0"), home, tensor.dtype.size, shape, tensor.shape))
        return template.format(
            future=f"{futures}[{index}]",
            tile=slot_pointer(offset, stride, slot, "uint8_t"),
            tensor=home,
            element_bytes=tensor.dtype.size,
            rank=len(shape),
            box=_int_array(shape),
            strides=_int_array(element_strides(tensor.shape)),
        )

    definitions = [f"/* {c_comment_text(tiled.layer.name)} ({c_comment_text(tiled.layer.op_type, 40)}): "
                   f"{len(tiled.tiles)} tiles, {len(tiled.variants)} kernel variants */"]
    definitions.append(
        f"static const int32_t {prefix}_tiles[{len(rows) * columns}] = {{\n    "
        + ",\n    ".join(", ".join(str(v) for v in row) for row in rows) + "\n};"
    )
    fetch_cases, compute_cases, store_cases, resident_cases = [], [], [], []
    for number, variant in enumerate(tiled.variants):
        fetch = [transfer(primitives.to_tile, i, True, number, "slot", "futures")
                 for i in range(n_in) if node.inputs[i].name and i not in fixed]
        resident = [transfer(primitives.to_tile, i, True, number, "0", "futures")
                    for i in sorted(layout.resident)]
        store = [transfer(primitives.from_tile, i, False, number, "slot", "futures") for i in range(n_out)
                 if i not in layout.local_outputs]
        pointers = []
        for i, tensor in enumerate(node.inputs):
            if not tensor.name:
                continue
            c_type = ctxt[tensor.name].dtype.c_type
            if i in layout.home_inputs:  # read in place: the constant's own array in the home level
                pointers.append(f"{c_type} *{tile_input_name(i)} = (({c_type} *){ctxt[tensor.name].c_name});")
                continue
            offset, stride = layout.inputs[i]
            slot = "0" if i in fixed else "slot"
            pointers.append(f"{c_type} *{tile_input_name(i)} = {slot_pointer(offset, stride, slot, c_type)};")
        for i, tensor in enumerate(outputs):
            offset, stride = layout.outputs[i]
            c_type = ctxt[tensor.name].dtype.c_type
            slot = "0" if i in layout.local_outputs else "slot"
            pointers.append(f"{c_type} *{tile_output_name(i)} = {slot_pointer(offset, stride, slot, c_type)};")
        for key in sorted(variant.scratch):
            pointers.append(f"uint8_t *{tile_scratch_name(key)} = ({level_pointer} + {layout.scratch[key]});")
        if parallel is None:
            body = _kernel_block(pointers, variant.code)
        else:
            body = _cluster_kernel(pointers, variant, tiled, ctxt, layout, parallel,
                                   split.variants[number] if split is not None else None, level_pointer)
        fetch_cases.append(f"    case {number}:\n" + "".join(f"        {line}\n" for line in fetch) + "        break;")
        resident_cases.append(f"    case {number}:\n" + "".join(f"        {line}\n" for line in resident) + "        break;")
        store_cases.append(f"    case {number}:\n" + "".join(f"        {line}\n" for line in store) + "        break;")
        compute_cases.append(f"    case {number}: {{\n" + "".join(f"        {line}\n" for line in body.splitlines())
                             + "        break;\n    }")
    unused = "(void)row; (void)slot; (void)futures;"
    names: dict[str, str] = {}
    future = primitives.future_type
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
    wait_inputs = [primitives.wait.format(future=f"in_futures{futures}[{{slot}}][{i}]") for i in range(n_in)
                   if node.inputs[i].name and i not in fixed]
    wait_resident = [primitives.wait.format(future=f"resident_futures{futures}[{i}]") for i in sorted(layout.resident)]
    wait_outputs = [primitives.wait.format(future=f"out_futures{futures}[{{slot}}][{i}]") for i in range(n_out)
                    if i not in layout.local_outputs]
    compute_lines = [line for block in compute for line in block.splitlines()]
    return LayerParts(definitions, names, compute_lines, wait_inputs, wait_resident, wait_outputs, columns, n_in, n_out)


def emit_tiled_layer(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, primitives: TransferPrimitives,
                     level_pointer: str, prefix: str, shared: dict[str, str] | None = None,
                     parallel: ClusterParallelism | None = None, split: LayerSplit | None = None,
                     staging: LayerStaging | None = None) -> tuple[str, list[str]]:
    """(body for RunNetwork, file-scope definitions) of one tiled layer (``staging``: see :func:`layer_parts`).

    ``shared`` maps function texts (with the name blanked) to the function
    already emitted for them, so identical transfer functions are emitted once.
    With ``parallel`` the layer becomes a task forked on every core of a
    cluster: the leader (core 0) moves tiles, barriers separate moving from
    computing, and each core computes its share of a tile (``split``).
    """
    parts = layer_parts(tiled, ctxt, layout, primitives, level_pointer, prefix, {} if shared is None else shared,
                        parallel, split, staging=staging)
    future, names, definitions = primitives.future_type, parts.names, parts.definitions
    args = (parts.columns, parts.n_in, parts.n_out, parts.compute_lines, parts.wait_inputs, parts.wait_resident,
            parts.wait_outputs)
    if parallel is None:
        lines = _serial_schedule(tiled, layout, prefix, level_pointer, future, names, *args)
        return "\n".join(lines), definitions
    lines = _cluster_schedule(tiled, layout, prefix, level_pointer, future, names, *args, parallel)
    return forked_task(lines, prefix, parallel, definitions), definitions


def forked_task(lines: list[str], prefix: str, parallel: ClusterParallelism, definitions: list[str]) -> str:
    """A schedule run on every core: ``lines`` become the task ``<prefix>_task`` (added to ``definitions``);
    returns the statement that forks it."""
    task = f"{prefix}_task"
    definitions.append(f"static void {task}(void *dc_arg) {{\n    (void)dc_arg;\n"
                       + "\n".join(f"    {line}" if line else "" for line in lines) + "\n}")
    return parallel.fork.format(task=task)


def _kernel_block(pointers: list[str], code: str) -> str:
    """Tile pointer declarations (each also marked used: kernels may read parameters at compile time) + kernel."""
    names_declared = [line.split("=")[0].split("*")[-1].strip() for line in pointers]
    silence_pointers = " ".join(f"(void){name};" for name in names_declared)
    return "\n".join(pointers + ([silence_pointers] if silence_pointers else []) + [code])


def _with_offset(pointer: str, offset: str) -> str:
    """``T *name = expr;`` → ``T *name = expr + offset;``."""
    return pointer[:-1] + f" + {offset};"


def _cluster_kernel(pointers: list[str], variant: Variant, tiled: TiledLayer, ctxt: NetworkContext,
                    layout: LayerLayout, parallel: ClusterParallelism, split: VariantSplit | None,
                    level_pointer: str) -> str:
    """One variant's compute on a cluster: each core its share, or the leader alone when the variant is not split."""
    core = parallel.core_id
    count = parallel.count_work

    def counted(work: int) -> list[str]:
        return [count.format(macs=f"{work}u")] if count else []

    if split is None:
        return "\n".join([f"if ({core} == 0) {{",
                          *[f"    {line}" for line in _kernel_block(pointers, variant.code).splitlines()],
                          *[f"    {line}" for line in counted(variant.work)], "}"])
    node = tiled.layer.node
    inputs = [i for i, tensor in enumerate(node.inputs) if tensor.name]
    offsets = [f"dc_in{i}" for i in inputs] + ["dc_out0"]
    lines = [f"const int32_t dc_core = (int32_t)({core});",
             "int32_t dc_share = -1;",
             "int64_t " + ", ".join(f"{name} = 0" for name in offsets) + ";",
             "switch (dc_core) {"]
    for number, share in enumerate(split.shares):
        if share is None:
            continue
        values = [f"{name} = {share.input_offsets.get(i, 0)};" for name, i in zip(offsets, inputs)
                  if share.input_offsets.get(i, 0)]
        if share.output_offsets[0]:
            values.append(f"dc_out0 = {share.output_offsets[0]};")
        lines.append(f"case {number}: dc_share = {share.sub}; {' '.join(values)} break;".replace("  ", " "))
    lines += ["default:", "    break;", "}", "(void)" + "; (void)".join(offsets) + ";", "switch (dc_share) {"]
    for number, sub in enumerate(split.subs):
        shared_pointers = []
        for line in pointers:
            name = line.split("=")[0].split("*")[-1].strip()
            if name.startswith("dc_tile_in"):
                shared_pointers.append(_with_offset(line, f"dc_in{name[len('dc_tile_in'):]}"))
            elif name.startswith("dc_tile_out"):
                shared_pointers.append(_with_offset(line, "dc_out0"))
            elif name.startswith("dc_tile_scratch_"):
                key = name[len("dc_tile_scratch_"):]
                stride = layout.scratch_strides.get(key, 0)
                shared_pointers.append(_with_offset(line, f"(int64_t)dc_core * {stride}") if stride else line)
        block = _kernel_block(shared_pointers, sub.code).splitlines() + counted(sub.work)
        lines += [f"case {number}: {{", *[f"    {line}" for line in block], "    break;", "}"]
    lines += ["default:", "    break;", "}"]
    return "\n".join(lines)


def _serial_schedule(tiled: TiledLayer, layout: LayerLayout, prefix: str, level_pointer: str, future: str,
                     names: dict[str, str], columns: int, n_in: int, n_out: int, compute_lines: list[str],
                     wait_inputs: list[str], wait_resident: list[str], wait_outputs: list[str]) -> list[str]:
    """The tile loop on one core: transfers and kernels in program order."""
    count = len(tiled.tiles)
    lines = [
        "{",
        f"    /* {c_comment_text(tiled.layer.name)}: {count} tiles, {'double' if layout.slots == 2 else 'single'} buffering */",
        *[f"    {line}" for part in table_lines(layout, prefix, level_pointer) for line in part],
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
            *[f"        {line}" for line in compute_lines],
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
            *[f"        {line}" for line in compute_lines],
            f"        {names['store']}(row, slot, out_futures[slot]);",
            "    }",
            *[f"    {w.format(slot=s)}" for s in (0, 1) for w in wait_outputs],
        ]
    lines.append("}")
    return lines


def _cluster_schedule(tiled: TiledLayer, layout: LayerLayout, prefix: str, level_pointer: str, future: str,
                      names: dict[str, str], columns: int, n_in: int, n_out: int, compute_lines: list[str],
                      wait_inputs: list[str], wait_resident: list[str], wait_outputs: list[str],
                      parallel: ClusterParallelism) -> list[str]:
    """The tile loop on every core of a cluster.

    Only the leader (core 0) touches the table copy and the DMA; a barrier
    after its waits publishes a tile to all cores, a barrier after the kernels
    tells it every core is done with the tile's buffers.
    """
    count = len(tiled.tiles)
    leader = f"const int32_t dc_leader = ({parallel.core_id}) == 0;"
    barrier = parallel.barrier
    lines = [
        f"/* {c_comment_text(tiled.layer.name)}: {count} tiles, {'double' if layout.slots == 2 else 'single'} buffering, "
        f"{parallel.cores} cores */",
        leader,
        *table_lines(layout, prefix, level_pointer)[0],
        f"{future} in_futures[2][{max(n_in, 1)}] = {{{{0}}}}, out_futures[2][{max(n_out, 1)}] = {{{{0}}}}, "
        f"resident_futures[{max(n_in, 1)}] = {{0}};",
        "if (dc_leader) {",
        *[f"    {line}" for line in table_lines(layout, prefix, level_pointer)[1]],
        f"    {names['fetch_resident']}(table, 0, resident_futures);",
        *[f"    {w}" for w in wait_resident],
        "}",
        barrier,
    ]
    if layout.slots == 1:
        lines += [
            f"for (int32_t t = 0; t < {count}; ++t) {{",
            f"    const int32_t *row = table + t * {columns};",
            "    if (dc_leader) {",
            f"        {names['fetch']}(row, 0, in_futures[0]);",
            *[f"        {w.format(slot=0)}" for w in wait_inputs],
            "    }",
            f"    {barrier}",
            "    const int32_t slot = 0;",
            *[f"    {line}" for line in compute_lines],
            f"    {barrier}",
            "    if (dc_leader) {",
            f"        {names['store']}(row, 0, out_futures[0]);",
            *[f"        {w.format(slot=0)}" for w in wait_outputs],
            "    }",
            "}",
        ]
    else:
        lines += [
            f"if (dc_leader) {names['fetch']}(table, 0, in_futures[0]);",
            f"for (int32_t t = 0; t < {count}; ++t) {{",
            "    const int32_t slot = t & 1;",
            f"    const int32_t *row = table + t * {columns};",
            "    if (dc_leader) {",
            *[f"        {w.format(slot='slot')}" for w in wait_inputs],
            f"        if (t + 1 < {count}) {names['fetch']}(row + {columns}, slot ^ 1, in_futures[slot ^ 1]);",
            "        if (t >= 2) {",
            *[f"            {w.format(slot='slot')}" for w in wait_outputs],
            "        }",
            "    }",
            f"    {barrier}",
            *[f"    {line}" for line in compute_lines],
            f"    {barrier}",
            f"    if (dc_leader) {names['store']}(row, slot, out_futures[slot]);",
            "}",
            "if (dc_leader) {",
            *[f"    {w.format(slot=s)}" for s in (0, 1) for w in wait_outputs],
            "}",
        ]
    lines.append("(void)in_futures; (void)out_futures; (void)resident_futures;")
    return lines
