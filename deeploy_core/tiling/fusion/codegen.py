"""C code of a fused pattern: one tile loop that runs every layer of the chain on each tile.

Each layer keeps its own tile table (same number of rows: one per pattern
tile), its own transfer functions and kernels (from
:func:`~deeploy_core.tiling.codegen.layer_parts`); what changes is the loop.
Per tile, every layer's outer inputs are fetched, the layers run in order
(each writing its output tile into the compute-level buffer the next one
reads), and only the last layer's output is stored.  With double buffering
the outer inputs of tile t+1 are fetched while tile t computes; intermediate
tiles have one buffer, as they live only within a tile.  On a cluster, a
barrier separates the layers, since every core reads the whole intermediate
tile its neighbours wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from deeploy_core.ir import NetworkContext
from deeploy_core.ir.names import c_comment_text
from deeploy_core.tiling.codegen import LayerLayout, LayerParts, forked_task, layer_parts, table_lines
from deeploy_core.tiling.staging import LayerStaging
from deeploy_core.tiling.tiles import TiledLayer
from deeploy_core.tiling.transfers import TransferPrimitives

if TYPE_CHECKING:
    from deeploy_core.tiling.parallel import ClusterParallelism, LayerSplit


def emit_fused_pattern(tiled_layers: Sequence[TiledLayer], ctxt: NetworkContext, layouts: Sequence[LayerLayout],
                       primitives: TransferPrimitives, level_pointer: str, prefix: str, shared: dict[str, str],
                       parallel: ClusterParallelism | None = None,
                       splits: Sequence[LayerSplit | None] = (),
                       stagings: Sequence[LayerStaging | None] = ()) -> tuple[str, list[str]]:
    """(body for RunNetwork, file-scope definitions) of the pattern whose layers are ``tiled_layers``; a layer's
    tensors beyond the home level move through its ``stagings`` entry, both hops at once."""
    splits = list(splits) or [None] * len(tiled_layers)
    stagings = list(stagings) or [None] * len(tiled_layers)
    parts = [layer_parts(tiled, ctxt, layout, primitives, level_pointer, f"{tiled.layer.c_name}_tiled", shared,
                         parallel, split, futures=f"_{position}", staging=staging)
             for position, (tiled, layout, split, staging) in enumerate(zip(tiled_layers, layouts, splits, stagings))]
    definitions = [line for part in parts for line in part.definitions]
    count = len(tiled_layers[-1].tiles)
    slots = layouts[-1].slots
    names = " -> ".join(c_comment_text(t.layer.name or t.layer.c_name) for t in tiled_layers)
    title = (f"/* fused pattern {names}: {count} tiles, {'double' if slots == 2 else 'single'} buffering"
             + (f", {parallel.cores} cores */" if parallel is not None else " */"))
    lines = [title, *_prologue(tiled_layers, layouts, parts, primitives.future_type, level_pointer, parallel)]
    lines += _loop(parts, count, slots, parallel)
    if parallel is None:
        return "\n".join(["{", *[f"    {line}" for line in lines], "}"]), definitions
    return forked_task(lines, prefix, parallel, definitions), definitions


def _prologue(tiled_layers: Sequence[TiledLayer], layouts: Sequence[LayerLayout], parts: list[LayerParts],
              future: str, level_pointer: str, parallel: ClusterParallelism | None) -> list[str]:
    """Tables copied into the compute level, future arrays, resident inputs fetched once."""
    declarations, leader_work = [], []
    for k, (tiled, layout, part) in enumerate(zip(tiled_layers, layouts, parts)):
        prefix = f"{tiled.layer.c_name}_tiled"
        declarations += [
            *table_lines(layout, prefix, level_pointer, f"_{k}")[0],
            f"{future} in_futures_{k}[2][{max(part.n_in, 1)}] = {{{{0}}}}, out_futures_{k}[2][{max(part.n_out, 1)}] = "
            f"{{{{0}}}}, resident_futures_{k}[{max(part.n_in, 1)}] = {{0}};",
        ]
        leader_work += [
            *table_lines(layout, prefix, level_pointer, f"_{k}")[1],
            f"{part.names['fetch_resident']}(table_{k}, 0, resident_futures_{k});",
            *part.wait_resident,
        ]
    if parallel is None:
        return declarations + leader_work
    return [f"const int32_t dc_leader = ({parallel.core_id}) == 0;", *declarations, "if (dc_leader) {",
            *[f"    {line}" for line in leader_work], "}", parallel.barrier]


def _rows(parts: list[LayerParts], tile: str) -> list[str]:
    return [f"const int32_t *row_{k} = table_{k} + {tile} * {part.columns};" for k, part in enumerate(parts)]


def _computes(parts: list[LayerParts], parallel: ClusterParallelism | None) -> list[str]:
    """Every layer's kernels in order, each in its own scope with ``row`` naming its table row."""
    lines: list[str] = []
    for k, part in enumerate(parts):
        if k and parallel is not None:
            lines.append(parallel.barrier)  # the next layer reads the whole intermediate tile
        lines += ["{", f"    const int32_t *row = row_{k};", *[f"    {line}" for line in part.compute_lines], "}"]
    return lines


def _loop(parts: list[LayerParts], count: int, slots: int, parallel: ClusterParallelism | None) -> list[str]:
    indent = (lambda lines: [f"    {line}" for line in lines])
    fetch = [f"{part.names['fetch']}({{row}}, {{slot}}, in_futures_{k}[{{slot}}]);" for k, part in enumerate(parts)]
    store = [f"{part.names['store']}(row_{k}, {{slot}}, out_futures_{k}[{{slot}}]);" for k, part in enumerate(parts)]
    wait_in = [w for part in parts for w in part.wait_inputs]
    wait_out = [w for part in parts for w in part.wait_outputs]
    barrier = [parallel.barrier] if parallel is not None else []

    def leader(lines: list[str]) -> list[str]:
        return lines if parallel is None else ["if (dc_leader) {", *indent(lines), "}"]

    if slots == 1:
        body = [*_rows(parts, "t"), "const int32_t slot = 0;", "(void)slot;",
                *leader([f.format(row=f"row_{k}", slot=0) for k, f in enumerate(fetch)] + [w.format(slot=0) for w in wait_in]), *barrier,
                *_computes(parts, parallel), *barrier,
                *leader([s.format(slot=0) for s in store] + [w.format(slot=0) for w in wait_out])]
        lines = [f"for (int32_t t = 0; t < {count}; ++t) {{", *indent(body), "}"]
    else:
        first = [f.format(row=f"table_{k}", slot=0) for k, f in enumerate(fetch)]
        prefetch = [f.format(row=f"row_{k} + {part.columns}", slot="slot ^ 1") for k, (f, part) in enumerate(zip(fetch, parts))]
        body = [*_rows(parts, "t"), "const int32_t slot = t & 1;",
                *leader([w.format(slot="slot") for w in wait_in] + [f"if (t + 1 < {count}) {{", *indent(prefetch), "}",
                                                                     "if (t >= 2) {",
                                                                     *indent([w.format(slot="slot") for w in wait_out]),
                                                                     "}"]),
                *barrier, *_computes(parts, parallel), *barrier,
                *leader([s.format(slot="slot") for s in store])]
        lines = [*leader(first), f"for (int32_t t = 0; t < {count}; ++t) {{", *indent(body), "}",
                 *leader([w.format(slot=s) for s in (0, 1) for w in wait_out])]
    unused = [f"(void)in_futures_{k}; (void)out_futures_{k}; (void)resident_futures_{k};" for k in range(len(parts))]
    return lines + unused
