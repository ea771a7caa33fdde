"""The Modifies flags."""

from __future__ import annotations

import functools
import operator

from deeploy_core.passes import Modifies


def test_everything_is_the_union_of_all_flags() -> None:
    singles = [flag for flag in Modifies if flag not in (Modifies.Nothing, Modifies.Everything)]
    assert {flag.name for flag in singles} == {
        "Nodes",
        "Edges",
        "Tensors",
        "Attributes",
        "Shapes",
        "Types",
    }
    assert functools.reduce(operator.or_, singles) == Modifies.Everything


def test_nothing_is_falsy_and_flags_combine() -> None:
    assert Modifies.Nothing.value == 0
    assert not Modifies.Nothing
    combined = Modifies.Nodes | Modifies.Attributes
    assert combined & Modifies.Nodes
    assert not combined & Modifies.Shapes
    assert Modifies.Shapes in Modifies.Everything
