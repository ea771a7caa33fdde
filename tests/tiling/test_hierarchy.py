"""Memory levels and hierarchies: validation, paths, YAML, size overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.errors import DeeployError
from deeploy_core.memory import MemoryHierarchy, MemoryLevel, load_hierarchy


def three_levels() -> MemoryHierarchy:
    return MemoryHierarchy(
        (MemoryLevel("L3", ("L2",), 8 << 20), MemoryLevel("L2", ("L3", "L1"), 512 << 10), MemoryLevel("L1", ("L2",), 64 << 10)),
        default_level="L2", compute_level="L1", io_level="L3")


def test_paths_follow_neighbours() -> None:
    hierarchy = three_levels()
    assert hierarchy.path("L3", "L1") == ["L3", "L2", "L1"]
    assert hierarchy.path("L1", "L3") == ["L3", "L2", "L1"][::-1]
    assert hierarchy.path("L2", "L2") == ["L2"]


def test_unknown_neighbour_duplicate_level_and_unreachable_compute_level_are_refused() -> None:
    with pytest.raises(DeeployError, match="unknown neighbour 'L9'"):
        MemoryHierarchy((MemoryLevel("L1", ("L9",), 10),), "L1", "L1")
    with pytest.raises(DeeployError, match="duplicate"):
        MemoryHierarchy((MemoryLevel("L1", (), 10), MemoryLevel("L1", (), 10)), "L1", "L1")
    with pytest.raises(DeeployError, match="no path from 'L2' to 'L1'"):
        MemoryHierarchy((MemoryLevel("L2", (), None), MemoryLevel("L1", (), 10)), "L2", "L1")
    with pytest.raises(DeeployError, match="size must be positive"):
        MemoryHierarchy((MemoryLevel("L1", (), 0),), "L1", "L1")


def test_sizes_can_be_overridden_by_name_only() -> None:
    resized = three_levels().with_sizes({"L1": 16000})
    assert resized.level("L1").size == 16000 and resized.level("L2").size == 512 << 10
    with pytest.raises(DeeployError, match="--l0: the memory hierarchy has no level L0 to resize"):
        three_levels().with_sizes({"L0": 1})


def test_yaml_round_trip_and_errors(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "levels.yaml"
    path.write_text(yaml.safe_dump(three_levels().to_json()), encoding="utf-8")
    assert load_hierarchy(path) == three_levels()
    path.write_text("[1, 2", encoding="utf-8")
    with pytest.raises(DeeployError, match="cannot read it"):
        load_hierarchy(path)
    path.write_text("levels: [{size: 3}]\ndefault: L1\ncompute: L1\n", encoding="utf-8")
    with pytest.raises(DeeployError, match="malformed"):
        load_hierarchy(path)
