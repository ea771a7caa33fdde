"""The tiling CP model: tile options, budgets, strategies, determinism, minimum memory."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from deeploy_core.tiling.cp_model import (LayerModel, TensorTerm, minimum_memory, most_relaxed, solve_tiling, table_at_home,
                                         tile_options)
from deeploy_core.tiling.geometry import Extent
from tests.support.conv_layer_model import conv_like


@pytest.mark.parametrize("dim", [1, 2, 7, 48, 97])
def test_tile_options_are_the_smallest_size_for_each_tile_count(dim: int) -> None:
    options = tile_options(dim)
    counts = [count for count, _ in options]
    assert counts == sorted(set(counts)) and counts[0] == 1 and counts[-1] == dim
    for count, size in options:
        assert -(-dim // size) == count
        assert size == 1 or -(-dim // (size - 1)) > count  # one less would need more tiles


def memory_of(tiles: dict[int, int], layer: LayerModel) -> int:
    total = 0
    for tensor in layer.tensors:
        elements = math.prod(e.size({a: tiles.get(a, layer.out_shape[a]) for a in range(4)}) for e in tensor.extents)
        # bytes are a multiple of gcd(element bytes, alignment): aligning up adds at most the rest
        total += tensor.buffers * (tensor.element_bytes * elements + layer.alignment - math.gcd(tensor.element_bytes,
                                                                                                 layer.alignment))
    if not layer.table_in_level:
        return total + layer.extra_bytes
    count = math.prod(-(-layer.out_shape[a] // t) for a, t in tiles.items())
    return total + 4 * layer.table_columns * count + layer.extra_bytes + layer.alignment - 4


def test_solution_respects_the_budget_and_prefers_few_tiles() -> None:
    layer = conv_like(20000)
    result = solve_tiling([layer])
    assert result.tiles is not None and result.status in ("OPTIMAL", "FEASIBLE")
    tiles = result.tiles["conv"]
    assert memory_of(tiles, layer) <= 20000
    roomy = solve_tiling([conv_like(10**7)]).tiles["conv"]
    assert roomy == {1: 16, 2: 32, 3: 32}, "with room to spare the layer is one tile"


def tile_count(layer: LayerModel, tiles: dict[int, int]) -> int:
    return math.prod(-(-layer.out_shape[a] // t) for a, t in tiles.items())


def test_min_strategy_takes_more_smaller_tiles_and_results_are_deterministic() -> None:
    layer = conv_like(20000)
    fewest = solve_tiling([layer]).tiles["conv"]
    most = solve_tiling([layer], strategy="min").tiles["conv"]
    assert tile_count(layer, most) > tile_count(layer, fewest)
    assert memory_of(most, layer) <= 20000  # the table of many tiles still has to fit
    assert solve_tiling([layer], "random-max", seed=3).tiles == solve_tiling([layer], "random-max", seed=3).tiles


def test_too_small_budget_is_infeasible_and_minimum_memory_is_the_threshold() -> None:
    """The least need is the tiling with the table left at home, which the solver falls back to."""
    found = minimum_memory(table_at_home(conv_like(0)))
    assert found.proven and found.at_least > 0
    need = found.at_least
    assert solve_tiling([conv_like(need - 1)]).tiles is None
    assert solve_tiling([conv_like(need)]).tiles is not None


def test_tables_count_against_the_budget() -> None:
    """More tiles mean a bigger table: with wide table rows even the "min" strategy must use fewer tiles."""
    cheap, costly = conv_like(40000), conv_like(40000)
    costly.table_columns = 64
    cheap_tiles = tile_count(cheap, solve_tiling([cheap], "min").tiles["conv"])
    costly_solution = solve_tiling([costly], "min").tiles["conv"]
    assert tile_count(costly, costly_solution) < cheap_tiles
    assert memory_of(costly_solution, costly) <= 40000


@pytest.mark.parametrize("budget", [20000, 120000, 140000, 10**7])
def test_one_tile_shortcut_gives_what_the_solver_gives(budget: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A layer that fits as one tile skips CP-SAT (tiling.cp_model.whole_layer_memory): same tiles and objective."""
    from deeploy_core.tiling import cp_model

    layer = conv_like(budget)
    assert cp_model.whole_layer_memory(layer) == memory_of({1: 16, 2: 32, 3: 32}, layer)
    shortcut = solve_tiling([layer])
    monkeypatch.setattr(cp_model, "whole_layer_memory", lambda _: 2**62)
    solved = solve_tiling([layer])
    assert (shortcut.tiles, shortcut.objective, shortcut.status) == (solved.tiles, solved.objective, solved.status)
    assert (shortcut.seconds == 0.0) == (memory_of({1: 16, 2: 32, 3: 32}, layer) <= budget)


def test_a_layer_that_fits_only_without_its_table_in_the_level_reads_it_from_home() -> None:
    """Between the two minimums the table stays in the home level; above them it is copied in as before."""
    with_table = minimum_memory(conv_like(0)).at_least
    without = minimum_memory(table_at_home(conv_like(0))).at_least
    assert without < with_table
    between = solve_tiling([conv_like(with_table - 1)])
    assert between.tiles is not None and between.home_tables == ("conv",)
    assert memory_of(between.tiles["conv"], table_at_home(conv_like(0))) <= with_table - 1
    assert solve_tiling([conv_like(with_table)]).home_tables == ()
    assert solve_tiling([conv_like(without - 1)]).tiles is None


def recurrence_like(budget: int) -> LayerModel:
    """An untiled LSTM-like layer: x and y small, weights w (big) and r (bigger) read whole by its one tile."""
    return LayerModel(
        "lstm", (16, 1, 1, 8), (),
        [TensorTerm("x", (Extent(16), Extent(1), Extent(4)), 4, 1, readable_in_place=False),
         TensorTerm("w", (Extent(1), Extent(32), Extent(4)), 4, 1, readable_in_place=True),
         TensorTerm("r", (Extent(1), Extent(32), Extent(8)), 4, 1, readable_in_place=True),
         TensorTerm("y", (Extent(16), Extent(1), Extent(1), Extent(8)), 4, 1)],
        table_columns=5, alignment=4, budget=budget)


def test_whole_constants_are_read_in_place_only_when_nothing_else_fits_and_the_largest_first() -> None:
    """x 256 B, w 512 B, r 1024 B, y 512 B: the fallback leaves the fewest, largest constants at home."""
    everything = solve_tiling([recurrence_like(2304 + 20)])
    assert everything.tiles is not None and everything.home_inputs == {} and everything.home_tables == ()
    without_r = solve_tiling([recurrence_like(1280)])
    assert without_r.tiles is not None and without_r.home_inputs == {"lstm": ("r",)}
    assert without_r.home_tables == ("lstm",)
    without_both = solve_tiling([recurrence_like(768)])
    assert without_both.home_inputs == {"lstm": ("r", "w")}
    # x and y are no constants: below their 768 bytes nothing helps, and the diagnosis bounds the need by them
    assert solve_tiling([recurrence_like(767)]).tiles is None
    assert minimum_memory(most_relaxed(recurrence_like(0))).at_least == 768


def test_word_aligned_buffers_of_word_sized_elements_need_no_slack() -> None:
    """Float tiles in a 4-byte-aligned level: each buffer is exactly its bytes (a float ReLU in 20 bytes)."""
    relu = LayerModel("relu", (1, 2, 8, 8), (1, 2, 3),
                      [TensorTerm("x", (Extent(1), Extent(2, 1), Extent(8, 2), Extent(8, 3)), 4, 2),
                       TensorTerm("y", (Extent(1), Extent(2, 1), Extent(8, 2), Extent(8, 3)), 4, 2)],
                      table_columns=3, alignment=4, budget=20, table_in_level=False)
    assert minimum_memory(relu).at_least == 16
    assert solve_tiling([relu]).tiles == {"relu": {1: 1, 2: 1, 3: 1}}


def test_a_table_never_outgrows_the_level_that_stores_it() -> None:
    """Tables live in the home level too: its size bounds the number of tiles even when the table is not copied."""
    free = minimum_memory(table_at_home(conv_like(0)))
    bounded = minimum_memory(replace(table_at_home(conv_like(0)), table_budget=4 * 4 * 64))  # 64 rows of 4 columns
    assert bounded.at_least > free.at_least
    tiles = solve_tiling([replace(conv_like(bounded.at_least), table_budget=4 * 4 * 64)]).tiles
    assert tiles is not None and tile_count(conv_like(0), tiles["conv"]) <= 64
    assert solve_tiling([replace(conv_like(bounded.at_least - 1), table_budget=4 * 4 * 64)]).tiles is None
