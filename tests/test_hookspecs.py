"""The hook specifications: one per extension kind, each documented with an example that runs."""

from __future__ import annotations

import doctest
import inspect

import pluggy
import pytest

from deeploy_core import hookspecs
from deeploy_core.extensions import EXTENSION_TYPES

HOOKS = sorted(hookspecs.HOOK_KINDS)


def test_one_hook_per_extension_kind() -> None:
    assert sorted(hookspecs.HOOK_KINDS.values()) == sorted(EXTENSION_TYPES)
    specs = {name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")}
    assert specs == set(HOOKS)


@pytest.mark.parametrize("hook_name", HOOKS)
def test_hook_is_a_registry_hook_with_an_example(hook_name: str) -> None:
    function = getattr(hookspecs, hook_name)
    assert pluggy.HookspecMarker(hookspecs.PROJECT_NAME)  # the marker used by the module
    assert hasattr(function, f"{hookspecs.PROJECT_NAME}_spec"), f"{hook_name} is not marked as a hookspec"
    assert list(inspect.signature(function).parameters) == ["register"]
    assert "Example:" in (function.__doc__ or "") and ">>>" in function.__doc__


@pytest.mark.parametrize("hook_name", HOOKS)
def test_hook_example_runs(hook_name: str) -> None:
    finder = doctest.DocTestFinder()
    [test] = [t for t in finder.find(hookspecs) if t.name.endswith(f".{hook_name}")]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 4, f"{runner.failures} of {runner.tries} example lines failed"
