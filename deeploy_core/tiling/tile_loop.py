"""The tile loop: one scheduler for every tiled layer and fused pattern, whatever runs it and however it buffers.

A tile loop runs one layer, or a fused chain of layers (each reading its
predecessor's tile in the compute level), tile by tile.  Four things vary,
and a :class:`~deeploy_core.tiling.tile_loop_plan.TileLoopPlan` names them:

* **cores** — on one core every statement runs in program order; on a
  cluster the loop is a task forked on every core: only the leader (core 0)
  touches the table copy and the DMA, a barrier after its waits publishes a
  tile to all cores, a barrier after the kernels tells it every core is done
  with the tile's buffers (and, in a chain, one between two layers, since
  every core reads the whole intermediate tile its neighbours wrote);
* **buffering** of the compute level — single: fetch tile t, wait, compute,
  store, wait; double: the fetch of tile t+1 into the other slot is started
  before tile t is computed, and a slot's store is waited for before the slot
  is computed into again (at the end of the layer for the last two);
* **the outer hop** of tensors beyond the home level — without its own
  pipeline both hops happen inside the transfer functions and the loop is the
  same as without staging; pipelined, staging slot ``t & 1`` holds tile t's
  outer transfers, the outer fetch of the next tile (with double buffering,
  of the tile after that) starts before the current tile computes, and a
  store's outer transfer is waited for only at the end of the layer;
* **fusion** — one layer, or a chain: every layer's outer inputs are fetched
  per tile, the layers' kernels run in order, only the last layer's output is
  stored.  A chain keeps one table, one set of futures and one ``row_<k>``
  per layer; each kernel switch runs in a scope of its own binding ``row``.

Inputs whose box never changes are fetched once before the loop.  The loop
calls each layer's transfer functions
(:mod:`deeploy_core.tiling.transfer_functions`) and runs its kernels' switch
(:mod:`deeploy_core.tiling.tile_kernels`) inline.
"""

from __future__ import annotations

from collections.abc import Sequence

from deeploy_core.errors import DeeployError
from deeploy_core.tiling.loop_layer import LoopLayer
from deeploy_core.tiling.tile_loop_plan import TileLoopPlan
from deeploy_core.tiling.tile_table import table_lines
from deeploy_core.tiling.transfers import TransferPrimitives


def emit_tile_loop(plan: TileLoopPlan, layers: Sequence[LoopLayer], subject: str, count: int, prefix: str,
                   level_pointer: str, primitives: TransferPrimitives) -> tuple[str, list[str]]:
    """(statement for RunNetwork, file-scope definitions beyond the layers' own) of the loop running ``layers``
    over ``count`` tiles; on a cluster the loop is the task ``<prefix>_task`` and the statement forks it."""
    if len(layers) != plan.layers:
        raise DeeployError(f"the tile loop plans {plan.layers} layers but is given {len(layers)}")
    lines = _TileLoop(plan, layers, count, level_pointer, primitives).lines(subject)
    if plan.cluster is None:
        return "\n".join(["{", *_indent(lines), "}"]), []
    task = f"{prefix}_task"
    definition = (f"static void {task}(void *dc_arg) {{\n    (void)dc_arg;\n"
                  + "\n".join(f"    {line}" if line else "" for line in lines) + "\n}")
    return plan.cluster.fork.format(task=task), [definition]


def _indent(lines: Sequence[str]) -> list[str]:
    return [f"    {line}" for line in lines]


def _guarded(condition: str, statements: list[str]) -> list[str]:
    """``statements`` run only if ``condition``: one statement on the line of its ``if``, more in a block."""
    if len(statements) == 1:
        return [f"if ({condition}) {statements[0]}"]
    return [f"if ({condition}) {{", *_indent(statements), "}"]


class _TileLoop:
    """The statements of one loop, section by section (the plan's variation points decide each one)."""

    def __init__(self, plan: TileLoopPlan, layers: Sequence[LoopLayer], count: int, level_pointer: str,
                 primitives: TransferPrimitives) -> None:
        self.plan, self.layers, self.count = plan, layers, count
        self.level_pointer, self.primitives = level_pointer, primitives
        self.barrier = [plan.cluster.barrier] if plan.cluster is not None else []

    def lines(self, subject: str) -> list[str]:
        return [self.plan.title(subject, self.count), *self.prologue(), *self.preload(), *self.loop(),
                *self.epilogue()]

    def suffix(self, k: int) -> str:
        """What tells the tables, futures and rows of the layers of a chain apart (a layer alone: nothing)."""
        return f"_{k}" if self.plan.chain else ""

    def lead(self, statements: list[str], inline: bool = False) -> list[str]:
        """Statements only the leader runs (on one core: all of them, unguarded)."""
        if self.plan.cluster is None or not statements:
            return statements
        if inline and len(statements) == 1:
            return [f"if (dc_leader) {statements[0]}"]
        return ["if (dc_leader) {", *_indent(statements), "}"]

    def wait(self, futures: str, indices: Sequence[int]) -> list[str]:
        return [self.primitives.wait.format(future=f"{futures}[{i}]") for i in indices]

    def wait_inputs(self, slot: str) -> list[str]:
        return [w for k, layer in enumerate(self.layers)
                for w in self.wait(f"in_futures{self.suffix(k)}[{slot}]", layer.streamed)]

    def wait_outputs(self, slot: str) -> list[str]:
        return [w for k, layer in enumerate(self.layers)
                for w in self.wait(f"out_futures{self.suffix(k)}[{slot}]", layer.stored)]

    def wait_outer_outputs(self, slot: str) -> list[str]:
        return [w for layer in self.layers for w in self.wait(f"outer_out_futures[{slot}]", layer.outer_stored)]

    def call(self, k: int, function: str, row: str, slot: str, futures: str, outer_slot: str, outer: str) -> str:
        """A call of layer ``k``'s transfer function; with the outer hop pipelined, with the staging slot too."""
        outer_arguments = f", {outer_slot}, outer_{outer}_futures[{outer_slot}]" if self.plan.outer_hop else ""
        return f"{self.layers[k].functions[function]}({row}, {slot}, {futures}{outer_arguments});"

    def fetch(self, k: int, row: str, slot: str, outer_slot: str) -> str:
        return self.call(k, "fetch", row, slot, f"in_futures{self.suffix(k)}[{slot}]", outer_slot, "in")

    def store(self, k: int, slot: str) -> str:
        return self.call(k, "store", f"row{self.suffix(k)}", slot, f"out_futures{self.suffix(k)}[{slot}]",
                         "outer_slot", "out")

    def fetch_outer(self, row: str, outer_slot: str) -> str:
        return f"{self.layers[0].functions['fetch_outer']}({row}, {outer_slot}, outer_in_futures[{outer_slot}]);"

    def prologue(self) -> list[str]:
        """Tables, future arrays, resident inputs fetched once (on a cluster by the leader, then a barrier)."""
        future = self.primitives.future_type
        lines = [f"const int32_t dc_leader = ({self.plan.cluster.core_id}) == 0;"] if self.plan.cluster else []
        declarations, setup = [], []
        for k, layer in enumerate(self.layers):
            s = self.suffix(k)
            declaration, fill = table_lines(layer.layout, layer.prefix, self.level_pointer, s)
            futures = (f"{future} in_futures{s}[2][{max(layer.inputs, 1)}] = {{{{0}}}}, out_futures{s}[2]"
                       f"[{max(layer.outputs, 1)}] = {{{{0}}}}, resident_futures{s}[{max(layer.inputs, 1)}] = {{0}};")
            if self.plan.table_filled_at_declaration:
                declarations += [*declaration, *fill, futures]
            else:
                declarations += [*declaration, futures]
                setup += fill
            if self.plan.outer_hop:
                declarations.append(f"{future} outer_in_futures[2][{max(layer.inputs, 1)}] = {{{{0}}}}, "
                                    f"outer_out_futures[2][{max(layer.outputs, 1)}] = {{{{0}}}};")
            setup += [self.call(k, "fetch_resident", f"table{s}", "0", f"resident_futures{s}", "0", "in"),
                      *self.wait(f"resident_futures{s}", layer.resident)]
        return [*lines, *declarations, *self.lead(setup), *self.barrier]

    def preload(self) -> list[str]:
        """Before the loop: the first tile's outer fetch, and with double buffering its fetch (the second tile's
        outer fetch too)."""
        first = [self.fetch_outer("table", "0")] if self.plan.outer_hop else []
        if self.plan.slots == 2:
            first += [self.fetch(k, f"table{self.suffix(k)}", "0", "0") for k in range(len(self.layers))]
            if self.plan.outer_hop:
                first += _guarded(f"{self.count} > 1", [self.fetch_outer(f"table + {self.layers[0].columns}", "1")])
        return self.lead(first, inline=self.plan.lone_leader_statement_inline)

    def compute(self) -> list[str]:
        """Every layer's kernels in order; in a chain each in its own scope with ``row`` naming its table row."""
        if not self.plan.chain:
            return list(self.layers[0].compute)
        lines: list[str] = []
        for k, layer in enumerate(self.layers):
            if k:
                lines += self.barrier  # the next layer reads the whole intermediate tile
            lines += ["{", f"    const int32_t *row = row_{k};", *_indent(layer.compute), "}"]
        return lines

    def loop(self) -> list[str]:
        """``for`` each tile: its transfers in (the leader's), compute, its transfers out (the leader's)."""
        single = self.plan.slots == 1
        slot = "0" if single else "slot"
        columns = self.layers[0].columns
        rows = [f"const int32_t *row{self.suffix(k)} = table{self.suffix(k)} + t * {layer.columns};"
                for k, layer in enumerate(self.layers)]
        declare_slot = f"const int32_t slot = {'0' if single else 't & 1'};"
        outer_slot = ["const int32_t outer_slot = t & 1;"] if self.plan.outer_hop else []
        if single:
            head = [self.fetch(k, f"row{self.suffix(k)}", "0", "outer_slot") for k in range(len(self.layers))]
            if self.plan.outer_hop:
                head += _guarded(f"t + 1 < {self.count}", [self.fetch_outer(f"row + {columns}", "outer_slot ^ 1")])
            head += self.wait_inputs(slot)
        else:
            ahead = [self.fetch(k, f"row{self.suffix(k)} + {layer.columns}", "slot ^ 1", "slot ^ 1")
                     for k, layer in enumerate(self.layers)]
            if self.plan.outer_hop:
                ahead += _guarded(f"t + 2 < {self.count}", [self.fetch_outer(f"row + {2 * columns}", "slot")])
            head = [*self.wait_inputs(slot), *_guarded(f"t + 1 < {self.count}", ahead),
                    "if (t >= 2) {", *_indent(self.wait_outputs(slot)), "}"]
        tail = [self.store(k, slot) for k in range(len(self.layers))] + (self.wait_outputs(slot) if single else [])
        # where ``slot`` is declared is spelling only (see TileLoopPlan): a chain after its rows, a layer alone
        # first with double buffering and just before its kernels with single buffering
        late: list[str] = []
        if self.plan.chain:
            start = [*rows, declare_slot, *(["(void)slot;"] if single else [])]
        elif single:
            start, late = [*rows, *outer_slot], [declare_slot]
        else:
            start = [declare_slot, *rows, *outer_slot]
        body = [*start, *self.lead(head), *self.barrier, *late, *self.compute(), *self.barrier,
                *self.lead(tail, inline=self.plan.lone_leader_statement_inline)]
        return [f"for (int32_t t = 0; t < {self.count}; ++t) {{", *_indent(body), "}"]

    def epilogue(self) -> list[str]:
        """The stores still in flight after the last tile; the future arrays marked used."""
        finish = self.wait_outputs("0") + self.wait_outputs("1") if self.plan.slots == 2 else []
        if self.plan.outer_hop:
            finish += self.wait_outer_outputs("0") + self.wait_outer_outputs("1")
        lines = self.lead(finish)
        if self.plan.futures_marked_used:
            outer = " (void)outer_in_futures; (void)outer_out_futures;" if self.plan.outer_hop else ""
            lines += [f"(void)in_futures{s}; (void)out_futures{s}; (void)resident_futures{s};{outer}"
                      for s in map(self.suffix, range(len(self.layers)))]
        return lines
