"""The transfer functions of a tiled layer: C functions moving one tile's boxes, by the tile's variant.

Each function switches on the variant in the tile's table row (``row[0]``)
and starts one transfer per tensor; the tile loop calls them and waits on the
futures they fill:

* ``fetch(row, slot, futures)`` starts the streamed inputs' transfers into
  buffering slot ``slot`` of the compute level;
* ``fetch_resident`` those of the inputs whose box never changes (slot 0),
  once before the loop;
* ``store(row, slot, futures)`` starts the outputs' transfers back home.

A fused pattern's intermediate tiles and the constants read in place move
nothing.  A tensor beyond the home level (:mod:`deeploy_core.tiling.staging`)
takes two hops through its staging buffer.  Without the outer hop pipelined
both happen inside these functions, the outer one waited for at once.  With it
pipelined (``outer_hop``) every function also takes ``(outer_slot,
outer_futures)``, the staging slot of the tile and the futures of its outer
transfers, and a fourth function ``fetch_outer(row, outer_slot,
outer_futures)`` starts the outer → staging transfers of a tile's streamed
inputs, which ``fetch`` then waits for; ``store`` waits until the staging
slot's previous outer transfer is done, moves the tile into it, waits, and
starts staging → outer, which completes in the background.

Functions whose text is identical (name aside) are emitted once per compile:
``shared`` maps each text to the name it was first emitted under.
"""

from __future__ import annotations

from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.layer_layout import LayerLayout, slot_pointer
from deeploy_core.tiling.staging import LayerStaging, box_copy, fetch_hops, store_hops, synchronous_fetch, \
    synchronous_store
from deeploy_core.tiling.tiles import TiledLayer
from deeploy_core.tiling.transfers import TransferPrimitives

MAX_RANK = 8
"""The largest tile rank the platforms' box transfers take."""

SIGNATURE = "const int32_t *row, int32_t slot, {future} *futures"
UNUSED = "(void)row; (void)slot; (void)futures;"
OUTER_ARGUMENTS = ", int32_t outer_slot, {future} *outer_futures"
OUTER_UNUSED = " (void)outer_slot; (void)outer_futures;"
FETCH_OUTER_SIGNATURE = "const int32_t *row, int32_t outer_slot, {future} *outer_futures"
FETCH_OUTER_UNUSED = "(void)row; (void)outer_slot; (void)outer_futures;"


def transfer_functions(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, primitives: TransferPrimitives,
                       level_pointer: str, prefix: str, shared: dict[str, str], staging: LayerStaging | None,
                       outer_hop: bool) -> tuple[dict[str, str], list[str]]:
    """(C name by function — ``fetch``, ``fetch_resident``, ``store``, with ``outer_hop`` ``fetch_outer`` too —,
    the definitions of those not emitted before under the same text)."""
    node = tiled.layer.node
    outputs = [t for t in node.outputs if t.name]
    n_in = len(node.inputs)

    def home(index: int, is_input: bool) -> str:
        tensor = ctxt[(node.inputs if is_input else outputs)[index].name]
        column = 1 + index if is_input else 1 + n_in + index
        return f"((uint8_t *){tensor.c_name} + (int64_t)row[{column}] * {tensor.dtype.size})"

    cases: dict[str, list[str]] = {name: [] for name in
                                   (("fetch_outer",) if outer_hop else ()) + ("fetch", "fetch_resident", "store")}
    for number, variant in enumerate(tiled.variants):
        lines: dict[str, list[str]] = {name: [] for name in cases}
        for i, tensor in enumerate(node.inputs):
            if not tensor.name or i in layout.local_inputs or i in layout.home_inputs:
                continue
            resident = i in layout.resident
            target = lines["fetch_resident" if resident else "fetch"]
            shape = variant.input_shapes[i]
            if shape is None:  # no box in this variant: nothing moves
                if not outer_hop:  # the layer-wise functions wrote an empty line here: kept, byte for byte
                    target.append("")
                continue
            _check_rank(tiled, shape)
            offset, stride = layout.inputs[i]
            tile = slot_pointer(level_pointer, offset, stride, "0" if resident else "slot")
            source = ctxt[tensor.name]
            args = (source.dtype.size, shape, source.shape)
            buffer = staging.inputs.get(i) if staging is not None else None
            if buffer is None:
                target.append(box_copy(primitives.to_tile, f"futures[{i}]", tile, home(i, True), *args))
            elif outer_hop and not resident:
                outer, rest = fetch_hops(primitives, f"futures[{i}]", f"outer_futures[{i}]", tile,
                                         buffer.pointer("outer_slot"), home(i, True), *args)
                lines["fetch_outer"].append(outer)
                target += rest
            else:
                target += synchronous_fetch(primitives, f"futures[{i}]", tile, buffer.pointer("0"), home(i, True),
                                            *args)
        for i, tensor in enumerate(outputs):
            if i in layout.local_outputs:
                continue
            shape = variant.output_shapes[i]
            _check_rank(tiled, shape)
            offset, stride = layout.outputs[i]
            tile = slot_pointer(level_pointer, offset, stride, "slot")
            target_tensor = ctxt[tensor.name]
            args = (target_tensor.dtype.size, shape, target_tensor.shape)
            buffer = staging.outputs.get(i) if staging is not None else None
            if buffer is None:
                lines["store"].append(box_copy(primitives.from_tile, f"futures[{i}]", tile, home(i, False), *args))
            elif outer_hop:
                lines["store"] += store_hops(primitives, f"futures[{i}]", f"outer_futures[{i}]", tile,
                                             buffer.pointer("outer_slot"), home(i, False), *args)
            else:
                lines["store"] += synchronous_store(primitives, f"futures[{i}]", tile, buffer.pointer("0"),
                                                    home(i, False), *args)
        for name, body in lines.items():
            cases[name].append(f"    case {number}:\n" + "".join(f"        {line}\n" for line in body)
                               + "        break;")
    names: dict[str, str] = {}
    definitions = []
    for name, variants in cases.items():
        signature, unused = _signature(name, outer_hop)
        text = (f"static void @NAME@({signature.format(future=primitives.future_type)}) {{\n    {unused}\n"
                "    switch (row[0]) {\n" + "\n".join(variants) + "\n    default:\n        break;\n    }\n}")
        if text not in shared:
            shared[text] = f"{prefix}_{name}"
            definitions.append(text.replace("@NAME@", shared[text]))
        names[name] = shared[text]
    return names, definitions


def _signature(name: str, outer_hop: bool) -> tuple[str, str]:
    """(parameter list with ``{future}`` to fill, the statement marking the parameters used) of function ``name``."""
    if name == "fetch_outer":
        return FETCH_OUTER_SIGNATURE, FETCH_OUTER_UNUSED
    if outer_hop:
        return SIGNATURE + OUTER_ARGUMENTS, UNUSED + OUTER_UNUSED
    return SIGNATURE, UNUSED


def _check_rank(tiled: TiledLayer, shape: tuple[int, ...]) -> None:
    if len(shape) > MAX_RANK:
        raise DeeployError(f"layer {tiled.layer.name!r}: tiles of rank {len(shape)} > {MAX_RANK} are not supported")
