"""The plugin host's error boundaries, registry and lookups, with in-memory plugins."""

from __future__ import annotations

import types

import pytest

from deeploy_core import AllocatorExtension, PlatformExtension, PluginHost, hookimpl
from deeploy_core.allocation import FirstFitAllocator
from deeploy_core.errors import DeeployError, ExtensionNotFoundError, PluginError
from deeploy_core.plugins import PluginCandidate, PluginSelection, PluginStatus


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


def test_duplicate_names_fail_both_plugins_naming_both_distributions() -> None:
    host = PluginHost.discover(
        candidates=[candidate("one", allocator_plugin("same")), candidate("two", allocator_plugin("same"))]
    )
    assert "plugin 'two' (two-dist 1.0)" in host.record("one").error
    assert "plugin 'one' (one-dist 1.0)" in host.record("two").error
    with pytest.raises(ExtensionNotFoundError, match="no allocator named 'same'"):
        host.extension("allocator", "same")


def test_duplicate_with_a_builtin_name_fails_the_plugin_and_keeps_the_conflict_visible() -> None:
    host = PluginHost()
    host.add_plugin(allocator_plugin("first-fit"), name="shadow")
    assert "deeploy_core.builtin" in host.record("shadow").error


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
