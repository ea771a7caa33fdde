"""The kernels of a tiled layer inside its tile loop: a switch over the tile's variant, each case one kernel.

Each case declares the tile pointers its kernel reads and writes (into the
compute level's buffers, at the current buffering slot, or in place in the
home level for the constants read there) and runs the variant's code.  On a
cluster every core runs the switch: a variant split among the cores runs each
core's share (:mod:`deeploy_core.tiling.parallel`) on its slice of the
buffers, one that is not split runs on the leader alone.

The kernels are inlined in the loop rather than called: as separate
functions, GCC 12 (-O2) wrongly proved their calls dead (its summary of a
function whose loops address the compute level through two element types).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.layer_layout import LayerLayout, slot_pointer
from deeploy_core.tiling.tiles import TiledLayer, Variant, tile_input_name, tile_output_name, tile_scratch_name

if TYPE_CHECKING:
    from deeploy_core.tiling.parallel import ClusterParallelism, LayerSplit, VariantSplit


def compute_lines(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, level_pointer: str,
                  parallel: ClusterParallelism | None, split: LayerSplit | None) -> list[str]:
    """The switch over ``row[0]`` (the tile's variant) running its kernel, one line per list item."""
    cases = []
    for number, variant in enumerate(tiled.variants):
        pointers = tile_pointers(tiled, ctxt, layout, variant, level_pointer)
        if parallel is None:
            body = kernel_block(pointers, variant.code)
        else:
            body = cluster_kernel(pointers, variant, tiled, layout, parallel,
                                  split.variants[number] if split is not None else None)
        cases.append(f"    case {number}: {{\n" + "".join(f"        {line}\n" for line in body.splitlines())
                     + "        break;\n    }")
    switch = ["switch (row[0]) {", *cases, "default:", "    break;", "}"]
    return [line for block in switch for line in block.splitlines()]


def tile_pointers(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, variant: Variant,
                  level_pointer: str) -> list[str]:
    """Declarations of the tile pointers one variant's kernel reads and writes.

    A buffer with one slot (a resident input, a fused pattern's intermediate
    tile) is addressed at slot 0, a streamed one at the loop's ``slot``.
    """
    node = tiled.layer.node
    single = layout.resident | layout.local_inputs
    pointers = []
    for i, tensor in enumerate(node.inputs):
        if not tensor.name:
            continue
        c_type = ctxt[tensor.name].dtype.c_type
        if i in layout.home_inputs:  # read in place: the constant's own array in the home level
            pointers.append(f"{c_type} *{tile_input_name(i)} = (({c_type} *){ctxt[tensor.name].c_name});")
            continue
        offset, stride = layout.inputs[i]
        pointer = slot_pointer(level_pointer, offset, stride, "0" if i in single else "slot", c_type)
        pointers.append(f"{c_type} *{tile_input_name(i)} = {pointer};")
    for i, tensor in enumerate([t for t in node.outputs if t.name]):
        offset, stride = layout.outputs[i]
        c_type = ctxt[tensor.name].dtype.c_type
        pointer = slot_pointer(level_pointer, offset, stride, "0" if i in layout.local_outputs else "slot", c_type)
        pointers.append(f"{c_type} *{tile_output_name(i)} = {pointer};")
    for key in sorted(variant.scratch):
        pointers.append(f"uint8_t *{tile_scratch_name(key)} = ({level_pointer} + {layout.scratch[key]});")
    return pointers


def kernel_block(pointers: list[str], code: str) -> str:
    """Tile pointer declarations (each also marked used: kernels may read parameters at compile time) + kernel."""
    names_declared = [line.split("=")[0].split("*")[-1].strip() for line in pointers]
    silence_pointers = " ".join(f"(void){name};" for name in names_declared)
    return "\n".join(pointers + ([silence_pointers] if silence_pointers else []) + [code])


def _with_offset(pointer: str, offset: str) -> str:
    """``T *name = expr;`` → ``T *name = expr + offset;``."""
    return pointer[:-1] + f" + {offset};"


def cluster_kernel(pointers: list[str], variant: Variant, tiled: TiledLayer, layout: LayerLayout,
                   parallel: ClusterParallelism, split: VariantSplit | None) -> str:
    """One variant's compute on a cluster: each core its share, or the leader alone when the variant is not split."""
    core = parallel.core_id
    count = parallel.count_work

    def counted(work: int) -> list[str]:
        return [count.format(macs=f"{work}u")] if count else []

    if split is None:
        return "\n".join([f"if ({core} == 0) {{",
                          *[f"    {line}" for line in kernel_block(pointers, variant.code).splitlines()],
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
        block = kernel_block(shared_pointers, sub.code).splitlines() + counted(sub.work)
        lines += [f"case {number}: {{", *[f"    {line}" for line in block], "    break;", "}"]
    lines += ["default:", "    break;", "}"]
    return "\n".join(lines)
