"""The plugin host's error boundaries, registry and lookups, with in-memory plugins."""

from __future__ import annotations

import math
import re
import time
import types
from pathlib import Path
from typing import Any, Callable

import onnx
import pytest

from deeploy_core import (
    AllocatorExtension,
    CodeTransformationExtension,
    OperatorExtension,
    PlatformExtension,
    PluginHost,
    hookimpl,
)
from deeploy_core.allocation import AllocationProblem, AllocationSolution, FirstFitAllocator
from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.errors import DeeployError, ExtensionNotFoundError, PluginError
from deeploy_core.plugins import PluginCandidate, PluginSelection, PluginStatus
from deeploy_core.plugins.timing import DEFAULT_SLOW_PLUGIN_SECONDS, SLOW_PLUGIN_VARIABLE, slow_plugin_threshold
from deeploy_core.testing.models import CONFORMANCE_MODELS


def allocator_plugin(name: str, factory=FirstFitAllocator) -> object:
    class Plugin:
        @hookimpl
        def register_allocators(self, register):
            register(AllocatorExtension(name=name, factory=factory, description=f"{name} for tests"))

    return Plugin()


def candidate(name: str, plugin: object, distribution: str | None = None) -> PluginCandidate:
    return PluginCandidate(name, distribution or f"{name}-dist", "1.0", f"{name}.plugin", lambda: plugin)


def failing_import() -> object:
    raise ImportError("No module named 'numpy_extra'")


def test_isolated_host_has_only_builtins() -> None:
    host = PluginHost()
    assert [record.name for record in host.plugins()] == ["deeploy_core.builtin"]
    assert [extension.name for extension in host.extensions("allocator")] == ["first-fit"]


def test_discover_loads_candidates_in_name_order_regardless_of_input_order() -> None:
    host = PluginHost.discover(candidates=[candidate("zeta", allocator_plugin("z")), candidate("alpha", allocator_plugin("a"))])
    assert [record.name for record in host.plugins(include_builtin=False)] == ["alpha", "zeta"]


def test_import_error_is_recorded_and_others_still_load() -> None:
    broken = PluginCandidate("broken", "broken-dist", "0.1", "broken.plugin", failing_import)
    host = PluginHost.discover(candidates=[broken, candidate("fine", allocator_plugin("fine"))])
    record = host.record("broken")
    assert record.status is PluginStatus.FAILED
    assert record.error == "import failed: ImportError: No module named 'numpy_extra'"
    assert host.extension("allocator", "fine").name == "fine"


def test_system_exit_during_import_is_contained() -> None:
    def exits() -> object:
        raise SystemExit(3)

    host = PluginHost.discover(candidates=[PluginCandidate("exits", "d", "1", "m", exits)])
    assert host.record("exits").status is PluginStatus.FAILED


def test_hookimpl_with_unknown_argument_is_rejected() -> None:
    module = types.ModuleType("extra_arg")

    @hookimpl
    def register_allocators(register, capacity):  # noqa: ARG001
        raise AssertionError("must not be called")

    module.register_allocators = register_allocators
    host = PluginHost()
    record = host.add_plugin(module, name="extra-arg")
    assert record.status is PluginStatus.FAILED and "capacity" in record.error
    assert host.extensions("allocator")[0].name == "first-fit"


def test_unknown_hook_is_reported() -> None:
    class Typo:
        @hookimpl
        def register_platfroms(self, register):
            raise AssertionError

    record = PluginHost().add_plugin(Typo(), name="typo")
    assert record.status is PluginStatus.FAILED
    assert record.error == "unknown hook(s) register_platfroms: no such hook specification"


def test_hook_that_raises_fails_only_its_plugin() -> None:
    class Raises:
        @hookimpl
        def register_allocators(self, register):
            raise KeyError("boom")

    host = PluginHost()
    host.add_plugin(Raises(), name="raises", distribution="raises-dist")
    host.add_plugin(allocator_plugin("good"), name="good")
    assert host.record("raises").error == "register_allocators raised KeyError: 'boom'"
    assert [e.name for e in host.extensions("allocator")] == ["first-fit", "good"]


def test_plugin_that_registers_a_partial_set_then_raises_contributes_nothing() -> None:
    class Half:
        @hookimpl
        def register_allocators(self, register):
            register(AllocatorExtension(name="half", factory=FirstFitAllocator))
            raise RuntimeError("second one broke")

    host = PluginHost()
    host.add_plugin(Half(), name="half")
    with pytest.raises(ExtensionNotFoundError):
        host.extension("allocator", "half")
    assert host.record("half").extensions == {} and host.record("half").status is PluginStatus.FAILED


def test_registering_the_wrong_descriptor_type_fails_the_plugin() -> None:
    class WrongKind:
        @hookimpl
        def register_allocators(self, register):
            register(PlatformExtension(name="oops", factory=object))

    host = PluginHost()
    host.add_plugin(WrongKind(), name="wrong-kind")
    assert "register_allocators must register AllocatorExtension, got PlatformExtension" in host.record("wrong-kind").error


def test_hook_returning_a_value_instead_of_registering_fails() -> None:
    class Returns:
        @hookimpl
        def register_allocators(self, register):
            return [AllocatorExtension(name="returned", factory=FirstFitAllocator)]

    host = PluginHost()
    host.add_plugin(Returns(), name="returns")
    assert "returned list" in host.record("returns").error


# -- duplicate names: the first registration wins ---------------------------------------------------


def described_allocator_plugin(name: str, description: str, *more: str) -> object:
    """A plugin registering allocator ``name`` (told apart by ``description``) and then the names in ``more``."""

    class Plugin:
        @hookimpl
        def register_allocators(self, register):
            register(AllocatorExtension(name=name, factory=FirstFitAllocator, description=description))
            for other in more:
                register(AllocatorExtension(name=other, factory=FirstFitAllocator, description=f"{other} of {description}"))

    return Plugin()


def test_duplicate_name_goes_to_the_first_distribution_and_the_other_plugin_is_a_conflict() -> None:
    # Plugin names sort one way, distribution names the other: registration follows the distribution.
    host = PluginHost.discover(candidates=[
        PluginCandidate("one", "zeta-dist", "1.0", "one.plugin", lambda: described_allocator_plugin("same", "of one", "only-one")),
        PluginCandidate("two", "alpha-dist", "2.0", "two.plugin", lambda: described_allocator_plugin("same", "of two")),
    ], warn=lambda line: None)
    assert host.extension("allocator", "same").description == "of two"
    assert host.registered("allocator", "same").origin.plugin == "two"
    two, one = host.record("two"), host.record("one")
    assert two.status is PluginStatus.OK and two.error == "" and two.extensions == {"allocator": ["same"]}
    assert one.status is PluginStatus.CONFLICT
    assert one.error == ("allocator 'same' is registered by plugin 'two' (alpha-dist 2.0) and by plugin 'one' "
                         "(zeta-dist 1.0): the registration of 'two' is used, the one of 'one' is ignored; "
                         "--disable-plugin two selects the other")
    assert one.extensions == {"allocator": ["only-one"]}, "the ignored name is not listed as provided"
    assert host.extension("allocator", "only-one").description == "only-one of of one", "the loser keeps the rest"
    assert one.to_json()["status"] == "conflict" and one.to_json()["error"] == one.error


def test_disabling_the_winner_hands_the_name_to_the_other_plugin() -> None:
    candidates = [candidate("one", described_allocator_plugin("same", "of one")),
                  candidate("two", described_allocator_plugin("same", "of two"))]
    host = PluginHost.discover(PluginSelection(disabled=frozenset({"one"})), candidates=candidates)
    assert host.extension("allocator", "same").description == "of two"
    assert host.record("two").status is PluginStatus.OK


def test_builtin_name_stays_with_the_core_whatever_the_distribution_is_called() -> None:
    warnings: list[str] = []
    host = PluginHost(warn=warnings.append)
    host.add_plugin(described_allocator_plugin("first-fit", "impostor", "own"), name="shadow", distribution="aaa")
    assert host.registered("allocator", "first-fit").origin.plugin == "deeploy_core.builtin"
    assert host.extension("allocator", "first-fit").description != "impostor"
    shadow = host.record("shadow")
    assert shadow.status is PluginStatus.CONFLICT
    assert "allocator 'first-fit' is registered by plugin 'deeploy_core.builtin' (deeploy-core " in shadow.error
    assert "and by plugin 'shadow' (aaa)" in shadow.error and "--disable-plugin deeploy_core.builtin" in shadow.error
    assert [extension.name for extension in host.extensions("allocator")] == ["first-fit", "own"]
    assert host.record("deeploy_core.builtin").status is PluginStatus.OK


def test_a_plugin_registering_a_name_twice_keeps_the_first() -> None:
    class Twice:
        @hookimpl
        def register_allocators(self, register):
            register(AllocatorExtension(name="twice", factory=FirstFitAllocator, description="first"))
            register(AllocatorExtension(name="twice", factory=FirstFitAllocator, description="second"))

    warnings: list[str] = []
    host = PluginHost(warn=warnings.append)
    host.add_plugin(Twice(), name="twice-plugin", distribution="twice-dist", version="0.1")
    assert host.extension("allocator", "twice").description == "first"
    record = host.record("twice-plugin")
    assert record.status is PluginStatus.CONFLICT and record.extensions == {"allocator": ["twice"]}
    assert record.error == ("allocator 'twice' is registered twice by plugin 'twice-plugin' (twice-dist 0.1): the "
                            "first registration is used, the later one is ignored (only the plugin itself can change "
                            "which)")
    assert warnings == [f"warning: {record.error}\n"]


def test_every_lost_name_is_in_the_conflict_message() -> None:
    host = PluginHost(warn=lambda line: None)
    host.add_plugin(described_allocator_plugin("first-fit", "impostor", "mine", "mine"), name="greedy")
    error = host.record("greedy").error
    assert error.startswith("allocator 'first-fit' is registered by plugin 'deeploy_core.builtin'")
    assert "; also allocator 'mine' is registered twice by plugin 'greedy' (local)" in error


def test_duplicates_are_warned_once_when_their_kind_is_looked_up() -> None:
    class Shadow:
        @hookimpl
        def register_allocators(self, register):
            register(AllocatorExtension(name="first-fit", factory=FirstFitAllocator))

        @hookimpl
        def register_platforms(self, register):
            register(PlatformExtension(name="mine", factory=object))

    warnings: list[str] = []
    host = PluginHost(warn=warnings.append)
    host.add_plugin(Shadow(), name="shadow", distribution="shadow-dist", version="1.0")
    host.plugins()
    host.extensions("platform")
    host.create("platform", "mine")
    assert warnings == [], "listing plugins and using other kinds does not warn"
    host.create("allocator", "first-fit")
    host.extension("allocator", "first-fit")
    host.extensions("allocator")
    assert len(warnings) == 1
    assert warnings[0] == (
        f"warning: allocator 'first-fit' is registered by plugin 'deeploy_core.builtin' (deeploy-core "
        f"{host.record('deeploy_core.builtin').version}) and by plugin 'shadow' (shadow-dist 1.0): the registration "
        "of 'deeploy_core.builtin' is used, the one of 'shadow' is ignored; --disable-plugin deeploy_core.builtin "
        "selects the other\n")
    host.add_plugin(allocator_plugin("later"), name="later")  # rebuilds the registry
    host.extensions("allocator")
    assert len(warnings) == 1, "once per process, also across rebuilds"


def test_a_plugin_added_later_with_an_earlier_distribution_takes_the_name_over() -> None:
    host = PluginHost(warn=lambda line: None)
    host.add_plugin(described_allocator_plugin("contested", "of late"), name="late", distribution="b-dist")
    assert host.record("late").status is PluginStatus.OK
    host.add_plugin(described_allocator_plugin("contested", "of early"), name="early", distribution="a-dist")
    assert host.extension("allocator", "contested").description == "of early"
    assert host.record("early").status is PluginStatus.OK
    assert host.record("late").status is PluginStatus.CONFLICT and host.record("late").extensions == {}


def test_two_plugins_with_the_same_entry_point_name_is_an_error() -> None:
    host = PluginHost()
    host.add_plugin(allocator_plugin("x"), name="same", distribution="dist-a")
    with pytest.raises(DeeployError, match="two plugins are named 'same'"):
        host.add_plugin(allocator_plugin("y"), name="same", distribution="dist-b")


def test_unknown_extension_lists_available_names() -> None:
    with pytest.raises(ExtensionNotFoundError, match=r"no allocator named 'best' \(available: first-fit\)"):
        PluginHost().extension("allocator", "best")


def test_factory_error_is_reraised_naming_the_plugin() -> None:
    def broken_factory():
        raise ValueError("bad option")

    host = PluginHost()
    host.add_plugin(allocator_plugin("fragile", factory=broken_factory), name="fragile-plugin", distribution="fragile-dist", version="3.1")
    with pytest.raises(PluginError, match=r"plugin 'fragile-plugin' \(fragile-dist 3.1\) failed creating allocator 'fragile': ValueError: bad option"):
        host.create("allocator", "fragile")


def test_selection_rules() -> None:
    selection = PluginSelection.from_options({"DEEPLOY_CORE_PLUGINS": "Good_Plugin, other"}, disabled=["other"])
    assert selection.why_excluded("good-plugin", "x") is None
    assert selection.why_excluded("x", "good.plugin") is None
    assert selection.why_excluded("other", "x") == "disabled by --disable-plugin"
    assert selection.why_excluded("third", "x") == "not listed in DEEPLOY_CORE_PLUGINS"
    assert PluginSelection.from_options({}).allow_list is None
    assert PluginSelection.from_options({"DEEPLOY_CORE_PLUGINS": ""}).allow_list == frozenset()
    assert PluginSelection.from_options({}, no_plugins=True).why_excluded("a", "b") == "disabled by --no-plugins"
    assert PluginSelection.from_options({}, no_plugins=True).why_excluded("a", "b", builtin=True) is None


def test_disabled_candidate_is_never_imported() -> None:
    def must_not_load() -> object:
        raise AssertionError("imported a disabled plugin")

    host = PluginHost.discover(
        PluginSelection(disabled=frozenset({"skipped"})),
        candidates=[PluginCandidate("skipped", "d", "1", "m", must_not_load)],
    )
    assert host.record("skipped").status is PluginStatus.DISABLED


def test_check_pending_names_the_plugin() -> None:
    host = PluginHost()
    host._manager.register(types.SimpleNamespace(register_nothing=hookimpl(lambda register: None)), name="sneaky")
    with pytest.raises(DeeployError, match="plugin 'sneaky' implements unknown hook 'register_nothing'"):
        host.check_pending()


def test_tracing_reports_loads_and_hook_calls() -> None:
    lines: list[str] = []
    host = PluginHost.discover(candidates=[candidate("traced", allocator_plugin("t"))], trace=lines.append)
    host.plugins()
    text = "".join(lines)
    assert "loading plugin traced from traced.plugin" in text
    assert "register_allocators" in text


# -- load time --------------------------------------------------------------------------------------


def sleeping_import(seconds: float, plugin: object) -> Callable[[], object]:
    def load() -> object:
        time.sleep(seconds)
        return plugin

    return load


def test_load_time_is_recorded_and_a_slow_plugin_is_named_once() -> None:
    warnings: list[str] = []
    slow = PluginCandidate("sleepy", "sleepy-dist", "2.0", "sleepy.plugin", sleeping_import(0.2, allocator_plugin("zz")))
    host = PluginHost.discover(candidates=[slow, candidate("quick", allocator_plugin("q"))], slow_seconds=0.1,
                               warn=warnings.append)
    sleepy = host.record("sleepy")
    assert sleepy.load_seconds >= 0.2 and sleepy.status is PluginStatus.OK, "slow is not broken"
    assert host.record("quick").load_seconds < sleepy.load_seconds
    assert sleepy.to_json()["load_seconds"] == round(sleepy.load_seconds, 3)
    host.add_plugin(allocator_plugin("later"), name="later")  # rebuilds the registry
    host.plugins()
    named = [line for line in warnings if "'sleepy'" in line]
    assert len(named) == 1, warnings
    assert re.match(r"warning: plugin 'sleepy' \(sleepy-dist 2\.0\) took \d+\.\d\d s to load \(threshold 0\.1 s", named[0])
    assert "DEEPLOY_CORE_SLOW_PLUGIN_SECONDS" in named[0] and "--disable-plugin sleepy" in named[0]
    assert named[0].endswith("\n") and named[0].count("\n") == 1


def test_registry_hooks_count_towards_the_load_time_once_per_build() -> None:
    class SlowHook:
        @hookimpl
        def register_allocators(self, register):
            time.sleep(0.15)
            register(AllocatorExtension(name="slow-hook", factory=FirstFitAllocator))

    warnings: list[str] = []
    host = PluginHost(slow_seconds=0.1, warn=warnings.append)
    host.add_plugin(SlowHook(), name="slow-hook")
    first = host.record("slow-hook").load_seconds
    host.add_plugin(allocator_plugin("other"), name="other")
    second = host.record("slow-hook").load_seconds
    assert first >= 0.15 and second >= 0.15
    assert second < first + 0.1, "a rebuild replaces the hook time, it does not add to it"
    assert [line.split(" took")[0] for line in warnings if "slow-hook" in line] == ["warning: plugin 'slow-hook' (local)"]


def test_a_slow_import_that_fails_is_named_too() -> None:
    def slow_failure() -> object:
        time.sleep(0.15)
        raise ImportError("gave up")

    warnings: list[str] = []
    host = PluginHost.discover(candidates=[PluginCandidate("slow-broken", "d", "1", "m", slow_failure)],
                               slow_seconds=0.1, warn=warnings.append)
    assert host.record("slow-broken").status is PluginStatus.FAILED
    assert len([line for line in warnings if "'slow-broken' (d 1)" in line]) == 1


def test_disabled_plugins_take_no_time_and_raise_no_warning() -> None:
    warnings: list[str] = []
    host = PluginHost.discover(PluginSelection(no_plugins=True), slow_seconds=0.0, warn=warnings.append,
                               candidates=[candidate("off", allocator_plugin("off"))])
    assert host.record("off").load_seconds == 0.0
    assert all("'off'" not in line for line in warnings)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, DEFAULT_SLOW_PLUGIN_SECONDS), ("", DEFAULT_SLOW_PLUGIN_SECONDS), ("0.25", 0.25), ("0", 0.0),
     ("inf", math.inf)],
)
def test_slow_threshold_from_the_environment(value: str | None, expected: float) -> None:
    environ = {} if value is None else {SLOW_PLUGIN_VARIABLE: value}
    assert slow_plugin_threshold(environ) == expected


@pytest.mark.parametrize("value", ["fast", "-1", "nan"])
def test_a_bad_slow_threshold_is_a_one_line_error(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SLOW_PLUGIN_VARIABLE, value)
    with pytest.raises(DeeployError, match=f"{SLOW_PLUGIN_VARIABLE}='{value}': expected a number of seconds"):
        PluginHost()


# -- hooks that cannot work and register() used wrongly -----------------------------------------------


def test_registry_hook_without_the_register_argument_is_rejected() -> None:
    class Deaf:
        @hookimpl
        def register_allocators(self):
            raise AssertionError("must not be called")

    host = PluginHost()
    record = host.add_plugin(Deaf(), name="deaf")
    assert record.status is PluginStatus.FAILED
    assert record.error == ("register_allocators lacks the 'register' argument, so it can register nothing; "
                            "declare it as register_allocators(register)")
    assert [e.name for e in host.extensions("allocator")] == ["first-fit"]


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (lambda register: register(), "register() takes one AllocatorExtension per call, got 0 arguments"),
        (lambda register: register(AllocatorExtension(name="a", factory=FirstFitAllocator), "extra"),
         "register() takes one AllocatorExtension per call, got 2 arguments"),
        (lambda register: register(name="a", factory=FirstFitAllocator),
         "register() takes one AllocatorExtension, not keyword arguments (factory, name)"),
        (lambda register: register(AllocatorExtension(name="no-factory")),  # type: ignore[call-arg]
         "TypeError: AllocatorExtension.__init__() missing 1 required keyword-only argument: 'factory'"),
        (lambda register: register(AllocatorExtension(name="Bad Name", factory=FirstFitAllocator)),
         "ValueError: allocator name 'Bad Name' is invalid"),
        (lambda register: register(AllocatorExtension(name="not-callable", factory=42)),  # type: ignore[arg-type]
         "TypeError: allocator 'not-callable': factory must be callable, got int"),
        (lambda register: register("first-fit"), "register_allocators must register AllocatorExtension, got str"),
    ],
    ids=["no-argument", "two-arguments", "keywords", "missing-field", "bad-name", "factory-not-callable", "a-string"],
)
def test_register_called_wrongly_fails_the_plugin_with_the_reason(call: Callable[[Any], None], reason: str) -> None:
    class Clumsy:
        @hookimpl
        def register_allocators(self, register):
            call(register)

    host = PluginHost()
    host.add_plugin(Clumsy(), name="clumsy", distribution="clumsy-dist", version="0.2")
    record = host.record("clumsy")
    assert record.status is PluginStatus.FAILED
    assert record.error.startswith("register_allocators raised ") and reason in record.error
    assert "\n" not in record.error and "_RegisterCallback" not in record.error
    assert [e.name for e in host.extensions("allocator")] == ["first-fit"]


def test_operator_descriptor_missing_its_platform_fails_the_plugin() -> None:
    class NoPlatform:
        @hookimpl
        def register_operators(self, register):
            register(OperatorExtension(name="half", factory=object, platform="", op_type="Relu"))

    host = PluginHost()
    host.add_plugin(NoPlatform(), name="no-platform")
    assert host.record("no-platform").error == "register_operators raised ValueError: operator 'half': platform and op_type are required"


@pytest.mark.parametrize("returned", [AllocatorExtension(name="returned", factory=FirstFitAllocator), "first-fit", 0])
def test_hook_returning_anything_but_none_fails(returned: object) -> None:
    class Returns:
        @hookimpl
        def register_allocators(self, register):
            return returned

    host = PluginHost()
    host.add_plugin(Returns(), name="returns")
    assert host.record("returns").error == (f"register_allocators returned {type(returned).__name__}; "
                            "registry hooks call register() and return None")


# -- factories whose products are wrong, found when the extension is used ----------------------------


class _MalformedAllocator:
    """Gives ``answer`` for the problems of one kind (the arena, or tiles in a bounded level), solves the rest."""

    def __init__(self, answer: Callable[[AllocationProblem], object], tiles: bool) -> None:
        self.answer, self.tiles = answer, tiles

    def solve(self, problem: AllocationProblem) -> object:
        if (problem.capacity is not None) == self.tiles:
            return self.answer(problem)
        return FirstFitAllocator().solve(problem)


def _raise(problem: AllocationProblem) -> object:
    raise RuntimeError("solver crashed")


MALFORMED_ANSWERS: dict[str, tuple[Callable[[AllocationProblem], object], str]] = {
    "none": (lambda problem: None, "TypeError: solve() returned NoneType, expected an AllocationSolution"),
    "plain-dict": (lambda problem: {b.id: 0 for b in problem.blocks},
                   "TypeError: solve() returned dict, expected an AllocationSolution"),
    "string-offsets": (lambda problem: AllocationSolution({b.id: "0" for b in problem.blocks}),
                       "TypeError: solve() returned offset '0' for block"),
    "float-offsets": (lambda problem: AllocationSolution({b.id: 0.5 for b in problem.blocks}),
                      "TypeError: solve() returned offset 0.5 for block"),
    "missing-block": (lambda problem: AllocationSolution({}), "has no offset"),
    "overlapping": (lambda problem: AllocationSolution({b.id: 0 for b in problem.blocks}),
                    "overlap in time and memory"),
    "infeasible": (lambda problem: AllocationSolution(feasible=False, reason="gave up"),
                   "ValueError: found no arena layout: gave up"),
    "raises": (_raise, "RuntimeError: solver crashed"),
}


@pytest.fixture(scope="module")
def mlp_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models") / "mlp.onnx"
    onnx.save(CONFORMANCE_MODELS["mlp"](), path)
    return path


def host_with_generic_c(*plugins: tuple[object, str]) -> PluginHost:
    generic_c_plugin = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C plugin is not installed")
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    for plugin, name in plugins:
        host.add_plugin(plugin, name=name, distribution="bad-dist", version="0.1")
    return host


WRONG_ANSWER_CASES = [
    *[pytest.param(answer, False, id=f"arena-{answer}") for answer in sorted(MALFORMED_ANSWERS)],
    # An infeasible tile placement is a tiling diagnosis (smaller tiles would fit), not a plugin fault.
    *[pytest.param(answer, True, id=f"tiles-{answer}") for answer in sorted(MALFORMED_ANSWERS) if answer != "infeasible"],
]


@pytest.mark.parametrize(("answer", "tiled"), WRONG_ANSWER_CASES)
def test_a_wrong_allocator_answer_is_one_line_naming_the_plugin(answer: str, tiled: bool, mlp_path: Path) -> None:
    solve, reason = MALFORMED_ANSWERS[answer]
    factory = lambda: _MalformedAllocator(solve, tiles=tiled)  # noqa: E731
    host = host_with_generic_c((allocator_plugin("wrong", factory=factory), "wrong-allocator"))
    options = CompileOptions(platform="generic-c", allocator="wrong", level_sizes={"L1": 8000} if tiled else {})
    with pytest.raises(DeeployError) as caught:
        compile_model(mlp_path, options, host)
    message = str(caught.value)
    assert isinstance(caught.value, PluginError)
    assert message.startswith("plugin 'wrong-allocator' (bad-dist 0.1) failed solving with allocator 'wrong': ")
    assert reason in message and "\n" not in message


def test_a_code_transformation_factory_without_apply_is_blamed(mlp_path: Path) -> None:
    class NoApply:
        @hookimpl
        def register_code_transformations(self, register):
            register(CodeTransformationExtension(name="no-apply", factory=lambda: object()))

    host = host_with_generic_c((NoApply(), "no-apply-plugin"))
    with pytest.raises(PluginError, match=r"^plugin 'no-apply-plugin' \(bad-dist 0.1\) failed creating "
                                          r"code_transformation 'no-apply': TypeError: returned object, which has no "
                                          r"apply\(block, ctxt\)$"):
        compile_model(mlp_path, CompileOptions(platform="generic-c", code_transformations=("no-apply",)), host)


@pytest.mark.parametrize(
    ("apply", "reason"),
    [(lambda block, ctxt: None, "TypeError: apply() returned NoneType, expected an ExecutionBlock"),
     (lambda block, ctxt: block.missing_attribute, "AttributeError")],
    ids=["returns-none", "raises"],
)
def test_a_code_transformation_that_breaks_a_block_is_blamed(apply: Callable[..., Any], reason: str,
                                                             mlp_path: Path) -> None:
    class Pass:
        def apply(self, block: Any, ctxt: Any) -> Any:
            return apply(block, ctxt)

    class Breaks:
        @hookimpl
        def register_code_transformations(self, register):
            register(CodeTransformationExtension(name="breaks", factory=Pass))

    host = host_with_generic_c((Breaks(), "breaking-plugin"))
    with pytest.raises(PluginError) as caught:
        compile_model(mlp_path, CompileOptions(platform="generic-c", code_transformations=("breaks",)), host)
    message = str(caught.value)
    assert message.startswith("plugin 'breaking-plugin' (bad-dist 0.1) failed applying code_transformation 'breaks' "
                              "to layer ")
    assert reason in message
