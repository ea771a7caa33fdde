"""C code of a tiled layer whose tensors beyond the home level have double-buffered staging: the outer hop pipelined.

A tensor in the outer level (L3) reaches the compute level (L1) through its
staging buffer in the home level (L2, :mod:`deeploy_core.tiling.staging`).
With single buffering of the outer hop both hops happen inside the layer's
ordinary transfer functions (:func:`~deeploy_core.tiling.codegen.layer_parts`).
With double buffering each streamed staged tensor has two staging slots and the
outer hop gets a schedule of its own, so that it overlaps computation:

* ``fetch_outer(row, outer_slot, outer_futures)`` starts the outer → staging
  transfers of a tile's streamed staged inputs;
* ``fetch(row, slot, futures, outer_slot, outer_futures)`` waits for them and
  starts every input's transfer into the compute level (from staging or home);
* ``fetch_resident`` does both hops at once for inputs whose box never changes;
* ``store(row, slot, futures, outer_slot, outer_futures)`` waits until the
  staging slot's previous outer transfer is done, moves the tile into it,
  waits, and starts staging → outer, which completes in the background.

The loop starts the outer fetch of the next tile (with double buffering of the
compute level, of the tile after that) before the current tile computes, and
waits for a store's outer transfer only when its slot is used again (or at the
end of the layer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.ir.names import c_comment_text
from deeploy_core.tiling.codegen import (MAX_RANK, LayerLayout, _cluster_kernel, _kernel_block, forked_task, table_columns, table_lines,
                                         table_rows)
from deeploy_core.tiling.staging import LayerStaging, box_copy, fetch_hops, store_hops, synchronous_fetch
from deeploy_core.tiling.tiles import TiledLayer, Variant, tile_input_name, tile_output_name, tile_scratch_name
from deeploy_core.tiling.transfers import TransferPrimitives

if TYPE_CHECKING:
    from deeploy_core.tiling.parallel import ClusterParallelism, LayerSplit

SIGNATURE = "const int32_t *row, int32_t slot, {future} *futures, int32_t outer_slot, {future} *outer_futures"
UNUSED = "(void)row; (void)slot; (void)futures; (void)outer_slot; (void)outer_futures;"
OUTER_SIGNATURE = "const int32_t *row, int32_t outer_slot, {future} *outer_futures"
OUTER_UNUSED = "(void)row; (void)outer_slot; (void)outer_futures;"


def emit_staged_layer(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, primitives: TransferPrimitives,
                      level_pointer: str, prefix: str, shared: dict[str, str],
                      parallel: ClusterParallelism | None = None, split: LayerSplit | None = None,
                      staging: LayerStaging | None = None) -> tuple[str, list[str]]:
    """(body for RunNetwork, file-scope definitions) of a tiled layer with pipelined staging (see the module)."""
    assert staging is not None and staging.pipelined
    node = tiled.layer.node
    outputs = [t for t in node.outputs if t.name]
    n_in, n_out, columns = len(node.inputs), len(outputs), table_columns(tiled)
    future = primitives.future_type

    def l1(offset: int, stride: int, slot: str, c_type: str = "uint8_t") -> str:
        return f"(({c_type} *)({level_pointer} + {offset} + {slot} * {stride}))"

    def home(index: int, is_input: bool) -> str:
        tensor = ctxt[(node.inputs if is_input else outputs)[index].name]
        column = 1 + index if is_input else 1 + n_in + index
        return f"((uint8_t *){tensor.c_name} + (int64_t)row[{column}] * {tensor.dtype.size})"

    streamed = [i for i in range(n_in) if node.inputs[i].name and i not in layout.resident | layout.home_inputs]
    cases: dict[str, list[str]] = {"fetch_outer": [], "fetch": [], "fetch_resident": [], "store": []}
    compute_cases = []
    for number, variant in enumerate(tiled.variants):
        lines: dict[str, list[str]] = {name: [] for name in cases}
        for i in range(n_in):
            shape = variant.input_shapes[i]
            if not node.inputs[i].name or shape is None or i in layout.home_inputs:
                continue
            _check_rank(tiled, shape)
            tensor = ctxt[node.inputs[i].name]
            offset, stride = layout.inputs[i]
            buffer = staging.inputs.get(i)
            target = lines["fetch"] if i in streamed else lines["fetch_resident"]
            slot = "slot" if i in streamed else "0"
            args = (tensor.dtype.size, shape, tensor.shape)
            if buffer is None:
                target.append(box_copy(primitives.to_tile, f"futures[{i}]", l1(offset, stride, slot), home(i, True),
                                       *args))
            elif i in streamed:
                outer, rest = fetch_hops(primitives, f"futures[{i}]", f"outer_futures[{i}]", l1(offset, stride, slot),
                                         buffer.pointer("outer_slot"), home(i, True), *args)
                lines["fetch_outer"].append(outer)
                target += rest
            else:
                target += synchronous_fetch(primitives, f"futures[{i}]", l1(offset, stride, "0"), buffer.pointer("0"),
                                            home(i, True), *args)
        for i, shape in enumerate(variant.output_shapes):
            _check_rank(tiled, shape)
            tensor = ctxt[outputs[i].name]
            offset, stride = layout.outputs[i]
            buffer = staging.outputs.get(i)
            args = (tensor.dtype.size, shape, tensor.shape)
            if buffer is None:
                lines["store"].append(box_copy(primitives.from_tile, f"futures[{i}]", l1(offset, stride, "slot"),
                                               home(i, False), *args))
            else:
                lines["store"] += store_hops(primitives, f"futures[{i}]", f"outer_futures[{i}]",
                                             l1(offset, stride, "slot"), buffer.pointer("outer_slot"), home(i, False),
                                             *args)
        for name, body in lines.items():
            cases[name].append(f"    case {number}:\n" + "".join(f"        {line}\n" for line in body) + "        break;")
        code = _compute(tiled, ctxt, layout, variant, number, level_pointer, parallel, split, l1)
        compute_cases.append(f"    case {number}: {{\n" + "".join(f"        {line}\n" for line in code.splitlines())
                             + "        break;\n    }")
    rows = table_rows(tiled, ctxt)
    definitions = [
        f"/* {c_comment_text(tiled.layer.name)} ({c_comment_text(tiled.layer.op_type, 40)}): {len(tiled.tiles)} tiles, "
        f"{len(tiled.variants)} kernel variants, tensors beyond the home level double buffered in it */",
        f"static const int32_t {prefix}_tiles[{len(rows) * columns}] = {{\n    "
        + ",\n    ".join(", ".join(str(v) for v in row) for row in rows) + "\n};",
    ]
    names: dict[str, str] = {}
    for name, variants in cases.items():
        signature, unused = (OUTER_SIGNATURE, OUTER_UNUSED) if name == "fetch_outer" else (SIGNATURE, UNUSED)
        text = (f"static void @NAME@({signature.format(future=future)}) {{\n    {unused}\n    switch (row[0]) {{\n"
                + "\n".join(variants) + "\n    default:\n        break;\n    }\n}")
        if text not in shared:
            shared[text] = f"{prefix}_{name}"
            definitions.append(text.replace("@NAME@", shared[text]))
        names[name] = shared[text]
    compute = ["switch (row[0]) {", *compute_cases, "default:", "    break;", "}"]
    wait = primitives.wait
    waits = {
        "in": [wait.format(future=f"in_futures[{{slot}}][{i}]") for i in streamed],
        "out": [wait.format(future=f"out_futures[{{slot}}][{i}]") for i in range(n_out)],
        "outer_out": [wait.format(future=f"outer_out_futures[{{slot}}][{i}]") for i in sorted(staging.outputs)],
        "resident": [wait.format(future=f"resident_futures[{i}]") for i in sorted(layout.resident)],
    }
    schedule = _schedule(tiled, layout, prefix, level_pointer, future, names, columns, n_in, n_out,
                         [line for block in compute for line in block.splitlines()], waits, parallel)
    if parallel is None:
        return "\n".join(["{", *[f"    {line}" for line in schedule], "}"]), definitions
    return forked_task(schedule, prefix, parallel, definitions), definitions


def _check_rank(tiled: TiledLayer, shape: tuple[int, ...]) -> None:
    if len(shape) > MAX_RANK:
        raise DeeployError(f"layer {tiled.layer.name!r}: tiles of rank {len(shape)} > {MAX_RANK} are not supported")


def _compute(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, variant: Variant, number: int,
             level_pointer: str, parallel: ClusterParallelism | None, split: LayerSplit | None,
             l1: Callable[[int, int, str, str], str]) -> str:
    """One variant's kernel on its compute-level tile buffers (on a cluster: each core its share)."""
    node = tiled.layer.node
    pointers = []
    for i, tensor in enumerate(node.inputs):
        if not tensor.name:
            continue
        c_type = ctxt[tensor.name].dtype.c_type
        if i in layout.home_inputs:  # read in place from the home level (pinned there: never staged)
            pointers.append(f"{c_type} *{tile_input_name(i)} = (({c_type} *){ctxt[tensor.name].c_name});")
            continue
        offset, stride = layout.inputs[i]
        pointers.append(f"{c_type} *{tile_input_name(i)} = "
                        f"{l1(offset, stride, '0' if i in layout.resident else 'slot', c_type)};")
    for i, tensor in enumerate([t for t in node.outputs if t.name]):
        offset, stride = layout.outputs[i]
        c_type = ctxt[tensor.name].dtype.c_type
        pointers.append(f"{c_type} *{tile_output_name(i)} = {l1(offset, stride, 'slot', c_type)};")
    for key in sorted(variant.scratch):
        pointers.append(f"uint8_t *{tile_scratch_name(key)} = ({level_pointer} + {layout.scratch[key]});")
    if parallel is None:
        return _kernel_block(pointers, variant.code)
    return _cluster_kernel(pointers, variant, tiled, ctxt, layout, parallel,
                           split.variants[number] if split is not None else None, level_pointer)


def _schedule(tiled: TiledLayer, layout: LayerLayout, prefix: str, level_pointer: str, future: str,
              names: dict[str, str], columns: int, n_in: int, n_out: int, compute_lines: list[str],
              waits: dict[str, list[str]], parallel: ClusterParallelism | None) -> list[str]:
    """The tile loop: on a cluster the leader (core 0) moves tiles and barriers publish them; on one core the
    same statements run in program order.  Staging slot ``t & 1`` holds tile t's outer transfers."""
    count = len(tiled.tiles)
    barrier = [parallel.barrier] if parallel is not None else []

    def lead(lines: list[str]) -> list[str]:
        if parallel is None or not lines:
            return lines
        return ["if (dc_leader) {", *[f"    {line}" for line in lines], "}"]

    def waited(kind: str, slot: object) -> list[str]:
        return [w.format(slot=slot) for w in waits[kind]]

    fetch_outer, fetch, store = names["fetch_outer"], names["fetch"], names["store"]
    lines = [
        f"/* {c_comment_text(tiled.layer.name)}: {count} tiles, {'double' if layout.slots == 2 else 'single'} "
        f"buffering, double buffering of the outer hop" + (f", {parallel.cores} cores */" if parallel else " */"),
        *([f"const int32_t dc_leader = ({parallel.core_id}) == 0;"] if parallel is not None else []),
        *table_lines(layout, prefix, level_pointer)[0],
        f"{future} in_futures[2][{max(n_in, 1)}] = {{{{0}}}}, out_futures[2][{max(n_out, 1)}] = {{{{0}}}}, "
        f"resident_futures[{max(n_in, 1)}] = {{0}};",
        f"{future} outer_in_futures[2][{max(n_in, 1)}] = {{{{0}}}}, outer_out_futures[2][{max(n_out, 1)}] = {{{{0}}}};",
        *lead([*table_lines(layout, prefix, level_pointer)[1],
               f"{names['fetch_resident']}(table, 0, resident_futures, 0, outer_in_futures[0]);",
               *waits["resident"]]),
        *barrier,
    ]
    if layout.slots == 1:
        lines += lead([f"{fetch_outer}(table, 0, outer_in_futures[0]);"])
        body = [
            f"const int32_t *row = table + t * {columns};",
            "const int32_t outer_slot = t & 1;",
            *lead([f"{fetch}(row, 0, in_futures[0], outer_slot, outer_in_futures[outer_slot]);",
                   f"if (t + 1 < {count}) {fetch_outer}(row + {columns}, outer_slot ^ 1, outer_in_futures[outer_slot ^ 1]);",
                   *waited("in", 0)]),
            *barrier,
            "const int32_t slot = 0;",
            *compute_lines,
            *barrier,
            *lead([f"{store}(row, 0, out_futures[0], outer_slot, outer_out_futures[outer_slot]);", *waited("out", 0)]),
        ]
        finish = waited("outer_out", 0) + waited("outer_out", 1)
    else:
        lines += lead([f"{fetch_outer}(table, 0, outer_in_futures[0]);",
                       f"{fetch}(table, 0, in_futures[0], 0, outer_in_futures[0]);",
                       f"if ({count} > 1) {fetch_outer}(table + {columns}, 1, outer_in_futures[1]);"])
        body = [
            "const int32_t slot = t & 1;",
            f"const int32_t *row = table + t * {columns};",
            "const int32_t outer_slot = t & 1;",
            *lead([*waited("in", "slot"),
                   f"if (t + 1 < {count}) {{",
                   f"    {fetch}(row + {columns}, slot ^ 1, in_futures[slot ^ 1], slot ^ 1, outer_in_futures[slot ^ 1]);",
                   f"    if (t + 2 < {count}) {fetch_outer}(row + {2 * columns}, slot, outer_in_futures[slot]);",
                   "}",
                   "if (t >= 2) {", *[f"    {w}" for w in waited("out", "slot")], "}"]),
            *barrier,
            *compute_lines,
            *barrier,
            *lead([f"{store}(row, slot, out_futures[slot], outer_slot, outer_out_futures[outer_slot]);"]),
        ]
        finish = waited("out", 0) + waited("out", 1) + waited("outer_out", 0) + waited("outer_out", 1)
    lines += [f"for (int32_t t = 0; t < {count}; ++t) {{", *[f"    {line}" for line in body], "}", *lead(finish)]
    lines.append("(void)in_futures; (void)out_futures; (void)resident_futures; (void)outer_in_futures; "
                 "(void)outer_out_futures;")
    return lines
