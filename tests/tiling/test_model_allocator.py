"""The extension point through which an allocator places tile buffers inside the tiler's CP-SAT model."""

from __future__ import annotations

from pathlib import Path

import pytest
from ortools.sat.python import cp_model

from deeploy_core import AllocatorExtension, hookimpl
from deeploy_core.allocation import FirstFitAllocator, FixedOrder, TilingModelAllocator, stack_in_order
from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.tiling.cp_model import TABLE_BLOCK, minimum_memory, solve_tiling, table_at_home
from deeploy_core.tiling.level_placement import expand_model_order
from tests.support.conv_layer_model import conv_like


class ReversedStack(FirstFitAllocator):
    """Keeps each layer's blocks under ``fraction`` of the capacity, stacked in reverse id order."""

    def __init__(self, fraction: float = 1.0) -> None:
        self.fraction, self.calls = fraction, []

    def add_to_tiling_model(self, model: cp_model.CpModel, blocks, capacity: int, label: str) -> FixedOrder:
        self.calls.append((label, sorted(block.id for block in blocks)))
        model.Add(sum(block.size for block in blocks) <= int(capacity * self.fraction))
        return FixedOrder(sorted((block.id for block in blocks), reverse=True))


def test_the_protocol_is_recognised_structurally() -> None:
    assert isinstance(ReversedStack(), TilingModelAllocator)
    assert not isinstance(FirstFitAllocator(), TilingModelAllocator)


def test_the_allocators_constraints_replace_the_tilers_memory_constraint() -> None:
    free = solve_tiling([conv_like(20000)])
    allocator = ReversedStack(fraction=0.5)
    halved = solve_tiling([conv_like(20000)], allocator=allocator)
    assert allocator.calls == [("L0", sorted(["(extra)", TABLE_BLOCK, "w", "x", "y"]))]
    assert free.tiles and halved.tiles and halved.tiles != free.tiles, "half the capacity must force smaller tiles"
    assert halved.orders == {"conv": ["y", "x", "w", "table", "(extra)"]}
    too_small = minimum_memory(table_at_home(conv_like(0))).at_least - 1  # below even the table left at home
    assert solve_tiling([conv_like(too_small)], allocator=ReversedStack()).tiles is None


def test_model_order_becomes_the_memory_map_order() -> None:
    order = expand_model_order(["out0", "(scratch)", "in1", "table", "in0"], ["in0", "in1", "out0", "scratch:a", "table"])
    assert order == ["out0", "scratch:a", "in1", "table", "in0"]
    offsets = stack_in_order(order, {"in0": 8, "in1": 16, "out0": 32, "scratch:a": 4, "table": 4},
                             {b: (0, 1) for b in order}, alignment=8)
    assert offsets == {"out0": 0, "scratch:a": 32, "in1": 40, "table": 56, "in0": 64}


def test_a_compile_places_every_tiled_layer_in_the_allocators_order(tiny_cnn: Path) -> None:
    generic_c = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C platform plugin is not installed")
    allocator = ReversedStack()

    class Plugin:
        @hookimpl
        def register_allocators(self, register):
            register(AllocatorExtension(name="reversed", factory=lambda: allocator, description="test"))

    host = PluginHost()
    host.add_plugin(generic_c, name="generic-c")
    host.add_plugin(Plugin(), name="reversed")
    # Layer by layer (--fusion none): one allocation problem per layer, with the layer's own block names.
    _, generated = compile_model(tiny_cnn, CompileOptions(platform="generic-c", allocator="reversed",
                                                          level_sizes={"L1": 16000}, fusion="none"), host)
    tiling = generated.report["tiling"]
    assert len(allocator.calls) == len(tiling["layers"]) > 1
    for layer, blocks in tiling["memory_map"].items():
        by_address = [block for block, _ in sorted(blocks.items(), key=lambda item: item[1])]
        expected = [b for b in sorted(blocks, reverse=True) if not b.startswith("scratch:")]
        assert [b for b in by_address if not b.startswith("scratch:")] == expected, layer
