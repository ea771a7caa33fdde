"""Per-core shares of a tile: chunking and the contiguity rule that decides whether a share can be split off."""

from __future__ import annotations

import numpy as np
import pytest

from deeploy_core.errors import DeeployError
from deeploy_core.tiling.parallel import ClusterParallelism, chunks, contiguous_offset


@pytest.mark.parametrize("extent, cores", [(1, 8), (7, 8), (8, 8), (9, 8), (100, 3), (16, 1)])
def test_chunks_cover_the_extent_in_order_and_differ_by_at_most_one(extent: int, cores: int) -> None:
    bounds = chunks(extent, cores)
    assert len(bounds) == min(extent, cores)
    assert bounds[0][0] == 0 and bounds[-1][1] == extent
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    sizes = [end - begin for begin, end in bounds]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


def _as_run(sub, parent) -> bool:
    """Brute force: is ``sub`` one contiguous run of a dense buffer holding ``parent``?"""
    shape = tuple(b - a for a, b in parent)
    index = np.arange(int(np.prod(shape))).reshape(shape)
    picked = index[tuple(slice(a - pa, b - pa) for (a, b), (pa, _) in zip(sub, parent))].reshape(-1)
    return picked.size == 0 or bool(np.all(np.diff(picked) == 1))


@pytest.mark.parametrize("sub, parent", [
    (((0, 1), (2, 4), (0, 5), (0, 5)), ((0, 1), (0, 8), (0, 5), (0, 5))),   # channels of an NCHW tile
    (((0, 1), (0, 8), (1, 3), (0, 5)), ((0, 1), (0, 8), (0, 5), (0, 5))),   # rows with several channels
    (((0, 1), (3, 4), (1, 3), (0, 5)), ((0, 1), (0, 8), (0, 5), (0, 5))),   # rows of one channel
    (((0, 1), (3, 4), (1, 3), (1, 5)), ((0, 1), (0, 8), (0, 5), (0, 5))),   # a partial row
    (((2, 4), (10, 20)), ((2, 6), (10, 20))),                                # rows of a matrix, parent not at 0
    (((2, 4), (10, 19)), ((2, 6), (10, 20))),
    (((0, 4), (0, 20)), ((0, 4), (0, 20))),                                  # the whole tile
])
def test_contiguous_offset_agrees_with_brute_force(sub, parent) -> None:
    offset = contiguous_offset(sub, parent)
    assert (offset is not None) == _as_run(sub, parent)
    if offset is not None:
        shape = tuple(b - a for a, b in parent)
        first = tuple(a - pa for (a, _), (pa, _) in zip(sub, parent))
        assert offset == int(np.ravel_multi_index(first, shape))


def test_a_share_outside_its_tile_is_refused() -> None:
    assert contiguous_offset(((0, 3),), ((1, 5),)) is None


def test_a_cluster_needs_a_core() -> None:
    with pytest.raises(DeeployError, match="at least one core"):
        ClusterParallelism(cores=0, fork="", core_id="0", barrier="")
