"""The pytest plugin shipped for plugin authors, exercised the way they use it (through pytester)."""

from __future__ import annotations

import pytest

# pytester's in-process runs forget every module first imported inside them, and
# numpy (imported by the allocators through OR-tools) refuses a second import in
# one process: import it here, before any run, so that every run shares it.
import deeploy_core.allocation  # noqa: F401  (imports numpy)

GOOD_PLUGIN = '''
from deeploy_core import AllocatorExtension, hookimpl
from deeploy_core.allocation import AllocationSolution


class PackedAllocator:
    """Stacks blocks on top of the highest live one (valid, not optimal)."""

    def solve(self, problem):
        offsets, placed = {}, []
        for block in sorted(problem.blocks, key=lambda b: (b.lower, b.id)):
            top = max((offsets[o.id] + o.size for o in placed if o.overlaps_in_time(block)), default=0)
            top = -(-top // problem.alignment) * problem.alignment
            offsets[block.id] = top
            placed.append(block)
        peak = max((offsets[b.id] + b.size for b in problem.blocks), default=0)
        if problem.capacity is not None and peak > problem.capacity:
            return AllocationSolution(offsets=offsets, feasible=False, reason=f"needs {peak}")
        return AllocationSolution(offsets=offsets)


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="packed", factory=PackedAllocator, description="stacked placement"))
'''


def test_fixtures_are_available_without_configuration(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        my_allocator_plugin=GOOD_PLUGIN,
        test_fixtures='''
from deeploy_core.plugins import PluginStatus
import my_allocator_plugin


def test_register(plugin_host, register_plugin):
    record = register_plugin(my_allocator_plugin, name="mine")
    assert record.status is PluginStatus.OK
    assert [e.name for e in plugin_host.extensions("allocator")] == ["first-fit", "packed"]


def test_host_is_isolated(plugin_host):
    assert [r.name for r in plugin_host.plugins()] == ["deeploy_core.builtin"]


def test_register_failure_is_reported(register_plugin):
    class Broken:
        from deeploy_core import hookimpl

        @hookimpl
        def register_allocators(self, register):
            raise RuntimeError("kaput")

    register_plugin(Broken(), name="broken")
''',
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*PluginLoadFailed: plugin 'broken' failed: register_allocators raised RuntimeError: kaput*"])


def test_conformance_suites_pass_for_a_good_plugin(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        my_allocator_plugin=GOOD_PLUGIN,
        test_conformance='''
import my_allocator_plugin
from deeploy_core.testing import AllocatorConformance, PluginConformance


class TestPlugin(PluginConformance):
    plugin = my_allocator_plugin
    plugin_name = "packed-plugin"


class TestAllocator(AllocatorConformance):
    plugin = my_allocator_plugin
    allocator_name = "packed"
    tight_instances_must_fit = False  # stacking is a heuristic: it may miss a gap-free packing
''',
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=36)


def test_conformance_catches_a_wrong_allocator(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        overlapping_plugin='''
from deeploy_core import AllocatorExtension, hookimpl
from deeploy_core.allocation import AllocationSolution


class EverythingAtZero:
    def solve(self, problem):
        return AllocationSolution(offsets={block.id: 0 for block in problem.blocks})


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="zero", factory=EverythingAtZero))
''',
        test_conformance='''
import overlapping_plugin
from deeploy_core.testing import AllocatorConformance, PluginConformance


class TestPlugin(PluginConformance):
    plugin = overlapping_plugin


class TestAllocator(AllocatorConformance):
    plugin = overlapping_plugin
    allocator_name = "zero"
''',
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    result.stdout.fnmatch_lines(
        [
            "*TestPlugin::test_extensions_are_described FAILED*",
            "*TestAllocator::test_unbounded_problem_is_solved_validly FAILED*",
            "*TestAllocator::test_reports_infeasible_below_the_lower_bound FAILED*",
            "*TestAllocator::test_is_deterministic PASSED*",
        ]
    )


def test_conformance_without_a_plugin_fails_clearly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_conformance='''
from deeploy_core.testing import PluginConformance


class TestForgotPlugin(PluginConformance):
    pass
''',
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=5)
    result.stdout.fnmatch_lines(["*TestForgotPlugin must set the class attribute 'plugin'*"])


def test_installed_plugin_host_fixture_sees_entry_points(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_installed='''
def test_installed(installed_plugin_host):
    names = [record.name for record in installed_plugin_host.plugins()]
    assert "deeploy_core.builtin" in names
''',
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


BROKEN_PLUGINS = {
    "raising_hook": ('''
from deeploy_core import hookimpl


@hookimpl
def register_allocators(register):
    raise RuntimeError("table is corrupt")
''', "register_allocators raised RuntimeError: table is corrupt"),
    "extra_argument": ('''
from deeploy_core import hookimpl


@hookimpl
def register_allocators(register, capacity):
    pass
''', "invalid hook implementation: *capacity*"),
    "missing_register": ('''
from deeploy_core import hookimpl


@hookimpl
def register_allocators():
    pass
''', "register_allocators lacks the 'register' argument, so it can register nothing*"),
    "unknown_hook": ('''
from deeploy_core import hookimpl


@hookimpl
def register_alocators(register):
    pass
''', "unknown hook(s) register_alocators: no such hook specification"),
    "returns_value": ('''
from deeploy_core import AllocatorExtension, hookimpl
from deeploy_core.allocation import FirstFitAllocator


@hookimpl
def register_allocators(register):
    return [AllocatorExtension(name="mine", factory=FirstFitAllocator)]
''', "register_allocators returned list; registry hooks call register() and return None"),
    "bad_descriptor": ('''
from deeploy_core import AllocatorExtension, hookimpl


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="mine"))
''', "register_allocators raised TypeError: *missing 1 required keyword-only argument: 'factory'"),
    "duplicate_name": ('''
from deeploy_core import AllocatorExtension, hookimpl
from deeploy_core.allocation import FirstFitAllocator


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="first-fit", factory=FirstFitAllocator))
''', "allocator 'first-fit' is registered by plugin 'deeploy_core.builtin' (deeploy-core *) and by plugin "
       "'duplicate_name' (local): the registration of 'deeploy_core.builtin' is used, the one of 'duplicate_name' is "
       "ignored; --disable-plugin deeploy_core.builtin selects the other"),
}


WITH_ALLOCATOR_SUITE = ("raising_hook", "duplicate_name")
"""Broken plugins also run through an extension suite (each such run has dozens of cases)."""

LOAD_STATUS = {"duplicate_name": "conflict"}
"""The host's status of a plugin where it is not ``failed`` (a plugin that lost a name keeps working)."""


def test_conformance_suites_name_the_cause_of_a_broken_plugin(pytester: pytest.Pytester) -> None:
    """Every suite stops with the host's reason, never with a symptom such as "no allocator named 'mine'"."""
    tests = ["from deeploy_core.testing import AllocatorConformance, PluginConformance"]
    for module, (source, _) in BROKEN_PLUGINS.items():
        pytester.makepyfile(**{f"plugin_{module}": source})
        tests.append(f'''
import plugin_{module}


class TestPlugin_{module}(PluginConformance):
    plugin = plugin_{module}
    plugin_name = "{module}"
''')
        if module in WITH_ALLOCATOR_SUITE:
            tests.append(f'''
class TestAllocator_{module}(AllocatorConformance):
    plugin = plugin_{module}
    plugin_name = "{module}"
    allocator_name = "mine"
''')
    pytester.makepyfile(test_broken="\n".join(tests))
    result = pytester.runpytest("-p", "no:cacheprovider", "--tb=short")
    outcomes = result.parseoutcomes()
    assert "passed" not in outcomes and outcomes["failed"] == len(BROKEN_PLUGINS)
    allocator_cases, rest = divmod(outcomes["errors"] - 4 * len(BROKEN_PLUGINS), len(WITH_ALLOCATOR_SUITE))
    assert rest == 0 and allocator_cases > 20, "every case of the allocator suite stops at setup"
    for module, (_, reason) in BROKEN_PLUGINS.items():
        # test_plugin_loads fails with the reason; every other check stops at setup with the same reason.
        result.stdout.fnmatch_lines([f"E   AssertionError: plugin '{module}' failed: {reason}"])
        status = LOAD_STATUS.get(module, "failed")
        result.stdout.fnmatch_lines([f"E   *PluginLoadFailed: plugin '{module}' {status}: {reason}"])
        expected = 4 + (allocator_cases if module in WITH_ALLOCATOR_SUITE else 0)
        # Count traceback lines only: the short summary repeats the message when the terminal is wide enough.
        traceback_lines = [
            line for line in result.outlines
            if line.startswith("E   ") and f"PluginLoadFailed: plugin '{module}' {status}: " in line
        ]
        assert len(traceback_lines) == expected
    result.stdout.no_fnmatch_line("*no allocator named*")


def test_allocator_conformance_names_a_malformed_answer(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        dict_plugin='''
from deeploy_core import AllocatorExtension, hookimpl


class DictAllocator:
    def solve(self, problem):
        return {block.id: 0 for block in problem.blocks}


class StringOffsets:
    def solve(self, problem):
        from deeploy_core.allocation import AllocationSolution
        return AllocationSolution({block.id: "0" for block in problem.blocks})


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="dict", factory=DictAllocator, description="answers a dict"))
    register(AllocatorExtension(name="strings", factory=StringOffsets, description="answers strings"))
''',
        test_conformance='''
import dict_plugin
from deeploy_core.testing import AllocatorConformance


class TestDict(AllocatorConformance):
    plugin = dict_plugin
    allocator_name = "dict"


class TestStrings(AllocatorConformance):
    plugin = dict_plugin
    allocator_name = "strings"
''',
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--tb=short")
    result.stdout.fnmatch_lines(["E   AssertionError: solve() returned dict, expected an AllocationSolution"])
    result.stdout.fnmatch_lines(["E   AssertionError: solve() returned offset '0' for block *, expected an integer"])
    result.stdout.no_fnmatch_line("*AttributeError*")
