"""The plugin host: loads plugins behind error boundaries and serves their extensions.

A broken plugin must never take the others down: every import, registration
and hook call of a plugin is wrapped, and a failure is recorded on that
plugin's :class:`PluginRecord` (shown by ``deeploy-core plugins``) instead of
propagating.  Calls into an extension the user selected, on the other hand,
raise :class:`~deeploy_core.errors.PluginError` naming the plugin, because
the user asked for that plugin's work and must learn why it failed.

Each plugin's load (import, hook validation and its registry hooks) is timed
with a monotonic clock; a plugin slower than the threshold of
:mod:`deeploy_core.plugins.timing` is named in one warning, because every
command pays for it.

Plugins register in a fixed order (built-ins first, then by distribution
name) and the first registration of a name wins; the plugin whose registration
is ignored stays in use with status ``conflict``, and each command that looks
up that kind of extension prints one warning (:mod:`deeploy_core.plugins.duplicates`).
"""

from __future__ import annotations

import os
import sys
import time
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Iterable, Literal, overload

import pluggy

from deeploy_core import hookspecs
from deeploy_core.errors import DeeployError, PluginError
from deeploy_core.extensions import EXTENSION_TYPES, Extension, RegisteredExtension
from deeploy_core.plugin_api_version import api_incompatibility
from deeploy_core.plugins.discovery import PluginCandidate, discover_plugins
from deeploy_core.plugins.records import PluginRecord, PluginStatus
from deeploy_core.plugins.duplicates import first_registration_wins, registration_order
from deeploy_core.plugins.operator_conflicts import note_operator_conflicts
from deeploy_core.plugins.registry import Contribution, ExtensionRegistry
from deeploy_core.plugins.selection import PluginSelection
from deeploy_core.plugins.timing import slow_plugin_threshold, slow_plugin_warning

if TYPE_CHECKING:
    from deeploy_core.codegen.execution_block import CodeTransformation
    from deeploy_core.extension_contracts import AllocatorContract, DeployerContract
    from deeploy_core.mapping import NodeMapper

BUILTIN_PLUGINS: tuple[tuple[str, str], ...] = (("deeploy_core.builtin", "deeploy_core.builtin.plugin"),)
"""(plugin name, module) of the core's own plugins, loaded like any other plugin."""


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class PluginHost:
    """Owns the pluggy manager, the plugin records and the extension registry.

    ``PluginHost()`` is isolated: it loads only the core's built-in plugins,
    which is what tests want.  ``PluginHost.discover()`` also loads installed
    plugins through the ``deeploy_core.plugins`` entry points, honouring the
    user's :class:`PluginSelection`.

    ``slow_seconds`` is the load time above which a plugin is named in a
    warning (default: :func:`~deeploy_core.plugins.timing.slow_plugin_threshold`
    of the environment); ``warn`` receives each warning line (default: stderr).
    """

    def __init__(
        self,
        *,
        selection: PluginSelection | None = None,
        builtins: bool = True,
        trace: Callable[[str], None] | None = None,
        slow_seconds: float | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.selection = selection or PluginSelection()
        self.slow_seconds = slow_plugin_threshold(os.environ) if slow_seconds is None else slow_seconds
        self._warn = warn or _write_stderr
        self._warned: set[str] = set()
        self._warned_duplicates: set[str] = set()
        self._import_seconds: dict[str, float] = {}
        self._manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._manager.add_hookspecs(hookspecs)
        self._records: dict[str, PluginRecord] = {}
        self._objects: dict[str, object] = {}
        self._registry: ExtensionRegistry | None = None
        self._trace_writer: Callable[[str], None] | None = None
        if trace is not None:
            self.enable_tracing(trace)
        if builtins:
            for name, module in BUILTIN_PLUGINS:
                self._load_candidate(
                    PluginCandidate(name, "deeploy-core", _core_version(), module, _module_loader(module)),
                    builtin=True,
                )

    @classmethod
    def discover(
        cls,
        selection: PluginSelection | None = None,
        *,
        candidates: Iterable[PluginCandidate] | None = None,
        trace: Callable[[str], None] | None = None,
        slow_seconds: float | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> PluginHost:
        """A host with every installed plugin the selection allows, loaded in name order."""
        host = cls(selection=selection, trace=trace, slow_seconds=slow_seconds, warn=warn)
        found = discover_plugins() if candidates is None else sorted(candidates, key=lambda c: (c.name, c.distribution))
        for candidate in found:
            host._load_candidate(candidate)
        return host

    # -- loading -----------------------------------------------------------------------------------

    def add_plugin(self, plugin: object, name: str, distribution: str = "local", version: str = "") -> PluginRecord:
        """Register an already imported plugin object or module (tests, notebooks, embedding)."""
        candidate = PluginCandidate(name, distribution, version, _describe(plugin), lambda: plugin)
        return self._load_candidate(candidate)

    def _load_candidate(self, candidate: PluginCandidate, builtin: bool = False) -> PluginRecord:
        if candidate.name in self._records:
            existing = self._records[candidate.name]
            raise DeeployError(
                f"two plugins are named {candidate.name!r}: {existing.label} and "
                f"{candidate.name!r} ({candidate.distribution} {candidate.version})".rstrip()
            )
        record = PluginRecord(
            name=candidate.name,
            distribution=candidate.distribution,
            version=candidate.version,
            source=candidate.source,
            builtin=builtin,
        )
        self._records[record.name] = record
        self._registry = None
        excluded = self.selection.why_excluded(record.name, record.distribution, builtin=builtin)
        if excluded:
            record.status, record.error = PluginStatus.DISABLED, excluded
            return record
        self._trace(f"loading plugin {record.name} from {record.source}")
        started = time.monotonic()
        try:
            plugin = candidate.load()
        except BaseException as error:  # noqa: BLE001 - a plugin's import may raise anything, even SystemExit
            if isinstance(error, KeyboardInterrupt):
                raise
            record.fail(f"import failed: {_one_line(error)}")
            return record
        else:
            self._register(plugin, record)
        finally:
            self._import_seconds[record.name] = record.load_seconds = time.monotonic() - started
        return record

    def _register(self, plugin: object, record: PluginRecord) -> None:
        incompatible = api_incompatibility(plugin)
        if incompatible:  # refused before pluggy sees it: its hooks may expect another API's descriptors
            record.fail(incompatible)
            return
        try:
            self._manager.register(plugin, name=record.name)
        except (pluggy.PluginValidationError, ValueError) as error:
            if self._manager.is_registered(plugin):
                self._manager.unregister(plugin)
            record.fail(f"invalid hook implementation: {_one_line(error)}")
            return
        callers = self._manager.get_hookcallers(plugin) or []
        unknown = sorted(caller.name for caller in callers if not caller.has_spec())
        if unknown:
            self._manager.unregister(plugin)
            record.fail(f"unknown hook(s) {', '.join(unknown)}: no such hook specification")
            return
        deaf = sorted(
            caller.name
            for caller in callers
            if caller.name in hookspecs.HOOK_KINDS
            for implementation in caller.get_hookimpls()
            if implementation.plugin is plugin and "register" not in implementation.argnames
        )
        if deaf:
            # pluggy accepts an implementation that takes fewer arguments than the
            # specification, but a registry hook without ``register`` can only
            # register nothing: certainly a mistake, so say so instead of listing
            # a plugin that silently provides nothing.
            self._manager.unregister(plugin)
            record.fail(f"{', '.join(deaf)} lacks the 'register' argument, so it can register nothing; "
                        f"declare it as {deaf[0]}(register)")
            return
        record.hooks = tuple(sorted(caller.name for caller in callers))
        self._objects[record.name] = plugin

    # -- the registry ------------------------------------------------------------------------------

    @property
    def registry(self) -> ExtensionRegistry:
        """The extension table, (re)built on first use after the set of plugins changed."""
        if self._registry is None:
            self._registry = self._build_registry()
        return self._registry

    def _build_registry(self) -> ExtensionRegistry:
        """Collect every working plugin's registrations in registration order; the first of each name wins."""
        contributions: list[Contribution] = []
        for record in self._loaded_records():
            record.clear_conflict()
            record.extensions = {}
            started = time.monotonic()
            contributions.extend(self._collect(record))
            record.load_seconds = self._import_seconds[record.name] + time.monotonic() - started
        kept, duplicates = first_registration_wins(contributions)
        for duplicate in duplicates:
            duplicate.loser.lose_registration(duplicate.kind, duplicate.name, duplicate.message)
        note_operator_conflicts(kept)
        self._warn_slow_plugins()
        return ExtensionRegistry(kept, tuple(duplicates))

    def _warn_slow_plugins(self) -> None:
        """One warning per plugin (working or not) whose load took longer than the threshold."""
        for name, record in sorted(self._records.items()):
            if name not in self._warned and record.load_seconds > self.slow_seconds:
                self._warned.add(name)
                self._warn(slow_plugin_warning(record, self.slow_seconds) + "\n")

    def _loaded_records(self) -> list[PluginRecord]:
        """Plugins whose hooks take part in the registry, in registration order."""
        loaded = [
            record
            for name, record in self._records.items()
            if name in self._objects and record.status in (PluginStatus.OK, PluginStatus.CONFLICT)
        ]
        return sorted(loaded, key=registration_order)

    def _kind_registry(self, kind: str) -> ExtensionRegistry:
        """The registry, for a lookup of ``kind``: the first lookup of a kind warns about its duplicates.

        Warning here, rather than when the registry is built, tells exactly the
        commands that use a kind (a compile looks up platforms, allocators,
        operators and code transformations; tilers and memory levels only when
        it tiles) and nobody else; ``deeploy-core plugins`` lists the conflicts.
        """
        registry = self.registry
        for duplicate in registry.duplicates(kind):
            if duplicate.warning not in self._warned_duplicates:
                self._warned_duplicates.add(duplicate.warning)
                self._warn(duplicate.warning + "\n")
        return registry

    def _collect(self, record: PluginRecord) -> list[Contribution]:
        """Call every registry hook of one plugin; any failure fails the whole plugin."""
        others = [other for name, other in self._objects.items() if name != record.name]
        contributions: list[Contribution] = []
        for hook_name, kind in hookspecs.HOOK_KINDS.items():
            if hook_name not in record.hooks:
                continue
            register = _RegisterCallback(record, EXTENSION_TYPES[kind], hook_name, contributions)
            caller = self._manager.subset_hook_caller(hook_name, remove_plugins=others)
            try:
                returned = [value for value in caller(register=register) if value is not None]
            except Exception as error:  # noqa: BLE001 - the error boundary of a plugin's hook
                record.fail(f"{hook_name} raised {_one_line(error)}")
                record.extensions = {}
                return []
            if returned:
                record.fail(f"{hook_name} returned {type(returned[0]).__name__}; registry hooks call register() and return None")
                record.extensions = {}
                return []
        return contributions

    # -- queries -----------------------------------------------------------------------------------

    def plugins(self, *, include_builtin: bool = True, include_disabled: bool = True) -> list[PluginRecord]:
        """Records of every plugin seen, sorted by name (the registry is built first)."""
        self.registry  # noqa: B018 - building the registry may mark plugins failed
        return [
            record
            for name, record in sorted(self._records.items())
            if (include_builtin or not record.builtin) and (include_disabled or record.status is not PluginStatus.DISABLED)
        ]

    def record(self, name: str) -> PluginRecord:
        """The record of the plugin called ``name``."""
        self.registry  # noqa: B018
        return self._records[name]

    def extension(self, kind: str, name: str) -> Extension:
        """The descriptor registered as ``name`` for ``kind``."""
        return self._kind_registry(kind).get(kind, name).extension

    def extensions(self, kind: str) -> list[Extension]:
        """Every descriptor of ``kind``, sorted by name."""
        return [registered.extension for registered in self._kind_registry(kind).all(kind)]

    def registered(self, kind: str, name: str) -> RegisteredExtension:
        """The descriptor together with the plugin that registered it."""
        return self._kind_registry(kind).get(kind, name)

    @overload
    def create(self, kind: Literal["platform", "memory_level", "tiler"], name: str, *args: object,
               **options: object) -> DeployerContract: ...

    @overload
    def create(self, kind: Literal["allocator"], name: str, *args: object, **options: object) -> AllocatorContract: ...

    @overload
    def create(self, kind: Literal["code_transformation"], name: str, *args: object,
               **options: object) -> CodeTransformation: ...

    @overload
    def create(self, kind: Literal["operator"], name: str, *args: object, **options: object) -> NodeMapper: ...

    def create(self, kind: str, name: str, *args: object, **options: object) -> object:
        """Call the factory of extension ``name``; a failure inside it names the plugin.

        A :class:`DeeployError` raised by the factory is a deliberate message
        to the user and passes unchanged; anything else is the plugin's bug.
        """
        registered = self._kind_registry(kind).get(kind, name)
        try:
            return registered.extension.factory(*args, **options)
        except DeeployError:
            raise  # the plugin's own word to the user (a bad option, an infeasible size): not a plugin failure
        except Exception as error:  # noqa: BLE001 - re-raised with the plugin named
            origin = registered.origin
            raise PluginError(origin.plugin, f"{origin.distribution} {origin.version}".strip(),
                              f"creating {kind} {name!r}", error) from error

    def check_pending(self) -> None:
        """Fail loudly if any registered plugin implements a hook no specification knows.

        Plugins loaded through the host are already checked one by one (and
        marked failed); this catches plugins registered behind its back.
        """
        problems = []
        for hook_name in sorted(vars(self._manager.hook)):
            caller = getattr(self._manager.hook, hook_name)
            if caller.has_spec():
                continue
            for implementation in caller.get_hookimpls():
                if not implementation.optionalhook:
                    problems.append(f"plugin {implementation.plugin_name!r} implements unknown hook {hook_name!r}")
        if problems:
            raise DeeployError("; ".join(problems))

    # -- tracing -----------------------------------------------------------------------------------

    def enable_tracing(self, write: Callable[[str], None]) -> None:
        """Send pluggy's trace of every hook call (and plugin loads) to ``write``."""
        self._trace_writer = write
        self._manager.trace.root.setwriter(write)
        self._manager.enable_tracing()

    def _trace(self, message: str) -> None:
        if self._trace_writer is not None:
            self._trace_writer(f"[deeploy_core] {message}\n")


class _RegisterCallback:
    """The ``register`` argument of one registry hook call for one plugin.

    A class rather than a closure so that ``--trace-plugins`` shows what it is.
    """

    def __init__(
        self, record: PluginRecord, expected: type[Extension], hook_name: str, contributions: list[Contribution]
    ) -> None:
        self.record = record
        self.expected = expected
        self.hook_name = hook_name
        self.contributions = contributions

    def __call__(self, *args: object, **kwargs: object) -> None:
        # Any arguments are accepted and then checked, so that a plugin calling
        # register wrongly gets a message about register, not about this class.
        expected = self.expected.__name__
        if kwargs:
            raise TypeError(f"register() takes one {expected}, not keyword arguments ({', '.join(sorted(kwargs))}); "
                            f"call register({expected}(...))")
        if len(args) != 1:
            raise TypeError(f"register() takes one {expected} per call, got {len(args)} arguments")
        extension = args[0]
        if not isinstance(extension, self.expected):
            raise TypeError(f"{self.hook_name} must register {expected}, got {type(extension).__name__}")
        self.contributions.append(Contribution(self.record, extension))
        self.record.extensions.setdefault(extension.kind, []).append(extension.name)

    def __repr__(self) -> str:
        return f"<register {self.expected.kind} for plugin {self.record.name!r}>"


def _write_stderr(text: str) -> None:
    sys.stderr.write(text)


def _module_loader(module: str) -> Callable[[], ModuleType]:
    def load() -> ModuleType:
        __import__(module)
        return sys.modules[module]

    return load


def _describe(plugin: object) -> str:
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    return f"{type(plugin).__module__}.{type(plugin).__qualname__}"


def _core_version() -> str:
    from deeploy_core import __version__

    return __version__


