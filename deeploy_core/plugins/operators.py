"""Operator plugins on a platform: which mappers they add, in which order, and what each one needs.

This is the one place that applies the precedence rule of
:class:`~deeploy_core.extensions.OperatorExtension`, so that the compiler
(:func:`plugin_mappers`), the listing (:func:`operator_table`) and the
conflict notes agree on whose code runs.  Plugins are ordered as the host
registers them (built-ins, then installed plugins by distribution name, see
:func:`~deeploy_core.plugins.duplicates.registration_order`), and one plugin's
extensions in the order of its ``register`` calls; never by name.

Calls into a plugin's factory run behind the host's error boundary: a crash or
a factory that returns something other than a
:class:`~deeploy_core.mapping.NodeMapper` is a
:class:`~deeploy_core.errors.PluginError` naming the plugin.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from deeploy_core.errors import DeeployError, PluginError
from deeploy_core.extensions import OperatorExtension
from deeploy_core.mapping import KernelRuntime, NodeMapper, PluginMappers
from deeploy_core.plugins.duplicates import registration_order
from deeploy_core.plugins.records import PluginRecord

if TYPE_CHECKING:
    from deeploy_core.platform import Platform
    from deeploy_core.plugins.host import PluginHost
    from deeploy_core.tiling.geometry import TileConstraint


@dataclass(frozen=True)
class OperatorVariant:
    """One registered operator extension with the plugin that registered it."""

    extension: OperatorExtension
    record: PluginRecord

    @property
    def source(self) -> str:
        """How listings name where the variant comes from."""
        return f"plugin {self.record.name}" + (" (override)" if self.extension.override else "")


def operator_variants(host: PluginHost, platform_name: str | None = None) -> list[OperatorVariant]:
    """Operator extensions (of ``platform_name``, or of every platform) in registration order."""
    variants = []
    for extension in host.extensions("operator"):
        assert isinstance(extension, OperatorExtension)
        if platform_name is not None and extension.platform != platform_name:
            continue
        record = host.record(host.registered("operator", extension.name).origin.plugin)
        variants.append(OperatorVariant(extension, record))

    def order(variant: OperatorVariant) -> tuple[tuple[bool, str, str], int]:
        names = variant.record.extensions.get("operator", [])
        return registration_order(variant.record), names.index(variant.extension.name)

    return sorted(variants, key=order)


def create_operator_mapper(host: PluginHost, extension: OperatorExtension) -> NodeMapper:
    """The extension's mapper, carrying the extension's tile constraint and C files, and the extension's name.

    What the mapper itself declares comes first; the descriptor fills in what
    it leaves open.
    """
    mapper = host.create("operator", extension.name)
    if not isinstance(mapper, NodeMapper):
        raise _blame(host, extension, TypeError(f"returned {type(mapper).__name__}, expected a NodeMapper"))
    runtime = mapper.runtime or KernelRuntime()
    runtime = KernelRuntime(runtime.sources + tuple(p for p in extension.sources if p not in runtime.sources),
                            runtime.include_dirs + tuple(p for p in extension.include_dirs
                                                         if p not in runtime.include_dirs))
    constraint = mapper.tile_constraint if mapper.tile_constraint is not None else _tile_constraint(host, extension)
    return replace(mapper, tile_constraint=constraint, runtime=runtime or None, extension=extension.name)


def _tile_constraint(host: PluginHost, extension: OperatorExtension) -> TileConstraint | None:
    """The descriptor's constraint, made now if the plugin gave a function for it."""
    from deeploy_core.tiling.geometry import TileConstraint

    given = extension.tile_constraint
    if given is None or isinstance(given, TileConstraint):
        return given
    try:
        made = given()
    except DeeployError:
        raise
    except Exception as error:  # noqa: BLE001 - the error boundary around plugin code
        raise _blame(host, extension, error) from error
    if not isinstance(made, TileConstraint):
        raise _blame(host, extension, TypeError(f"tile_constraint() returned {type(made).__name__}, "
                                                f"expected a TileConstraint"))
    return made


def _blame(host: PluginHost, extension: OperatorExtension, cause: BaseException) -> PluginError:
    """The one-line error naming the plugin that registered ``extension``."""
    origin = host.registered("operator", extension.name).origin
    return PluginError(origin.plugin, f"{origin.distribution} {origin.version}".strip(),
                       f"creating operator {extension.name!r}", cause)


def plugin_mappers(host: PluginHost | None, platform_name: str) -> PluginMappers:
    """The mappers operator plugins add to ``platform_name``, split by precedence (for ``map_nodes``)."""
    if host is None:
        return PluginMappers()
    first: dict[str, tuple[NodeMapper, ...]] = {}
    last: dict[str, tuple[NodeMapper, ...]] = {}
    for variant in operator_variants(host, platform_name):
        extension = variant.extension
        table = first if extension.override else last
        table[extension.op_key] = table.get(extension.op_key, ()) + (create_operator_mapper(host, extension),)
    return PluginMappers(first, last)


@dataclass(frozen=True)
class OperatorTableEntry:
    """One mapper of a platform's operator table, where it comes from and who is tried before it.

    ``shadowed_by`` names the sources of other origins whose mappers for the
    same op are tried first (empty when this source is the first to be asked):
    a shadowed variant compiles only the nodes all of those refuse.
    """

    op_key: str
    mapper: NodeMapper
    source: str
    shadowed_by: tuple[str, ...] = ()
    extension: OperatorExtension | None = None

    @property
    def source_label(self) -> str:
        """``plugin mish``, ``platform generic-c (shadowed by plugin fast-relu (override))``."""
        if not self.shadowed_by:
            return self.source
        return f"{self.source} (shadowed by {', '.join(self.shadowed_by)})"


def operator_table(host: PluginHost, platform_name: str, platform: Platform) -> list[OperatorTableEntry]:
    """Every mapper ``platform`` tries, op by op in the order they are tried, plugins' included."""
    own_source = f"platform {platform_name}"
    by_key: dict[str, list[tuple[NodeMapper, str, OperatorExtension | None]]] = {}
    for key in platform.op_types():
        by_key[key] = [(mapper, own_source, None) for _, mapper in platform.mappers_for(key)]
    variants = operator_variants(host, platform_name)
    for override in (True, False):
        for variant in (v for v in variants if v.extension.override is override):
            entry = (create_operator_mapper(host, variant.extension), variant.source, variant.extension)
            tried = by_key.setdefault(variant.extension.op_key, [])
            if override:
                position = sum(1 for _, _, ext in tried if ext is not None and ext.override)
                tried.insert(position, entry)
            else:
                tried.append(entry)
    entries = []
    for key, tried in by_key.items():
        earlier: list[str] = []
        for mapper, source, extension in tried:
            before = tuple(dict.fromkeys(s for s in earlier if s != source))
            entries.append(OperatorTableEntry(key, mapper, source, before, extension))
            earlier.append(source)
    return entries

