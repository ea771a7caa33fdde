"""Sections, partitions, overlaps and cuts on lifetimes small enough to check by hand."""

from __future__ import annotations

from deeploy_minimalloc.sweep import Partition, sweep


def test_the_published_five_buffer_example() -> None:
    # input.12.csv: b1 [0,3) b2 [3,9) b3 [0,9) b4 [9,21) b5 [0,21), as indices 0..4
    result = sweep([0, 3, 0, 9, 0], [3, 9, 9, 21, 21])
    assert result.sections == ((0, 2, 4), (1, 2, 4), (3, 4))
    assert list(zip(result.section_lower, result.section_upper)) == [(0, 1), (1, 2), (0, 2), (2, 3), (0, 3)]
    assert result.overlaps == ((2, 4), (2, 4), (0, 1, 4), (4,), (0, 1, 2, 3))
    assert result.partitions == (Partition((0, 2, 4, 1, 3), 0, 3),)
    assert result.cuts == (2, 1)


def test_lifetimes_that_only_touch_are_independent_partitions() -> None:
    """Half-open lifetimes: a buffer dying at 2 and one born at 2 never coexist."""
    result = sweep([0, 0, 2, 3], [2, 1, 4, 4])
    # sections: {0, 1} until 1 dies, {0} until 0 dies at 2, then {2, 3}
    assert result.sections == ((0, 1), (0,), (2, 3))
    assert result.partitions == (Partition((0, 1), 0, 2), Partition((2, 3), 2, 3))
    assert result.overlaps == ((1,), (0,), (3,), (2,))
    assert result.cuts == (1, 0)


def test_every_buffer_lives_in_exactly_its_section_range() -> None:
    lowers = [0, 1, 1, 4, 2, 6, 0]
    uppers = [3, 2, 5, 6, 7, 8, 1]
    result = sweep(lowers, uppers)
    for b in range(len(lowers)):
        inside = {s for s, members in enumerate(result.sections) if b in members}
        assert inside == set(range(result.section_lower[b], result.section_upper[b]))
        for other in result.overlaps[b]:
            assert lowers[b] < uppers[other] and lowers[other] < uppers[b]
    for s, cut in enumerate(result.cuts):
        spanning = [b for b in range(len(lowers)) if result.section_lower[b] <= s < result.section_upper[b] - 1]
        assert cut == len(spanning)


def test_no_buffers() -> None:
    result = sweep([], [])
    assert result.sections == () and result.partitions == () and result.cuts == ()
