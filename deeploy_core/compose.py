"""Building a deployer from names: platform deployer → memory-level wrapper → tiler wrapper.

Every piece is chosen by its registered name (never by which plugin happened to
load first), and every factory result is checked, so a plugin that returns the
wrong thing is named at composition time instead of failing later with an
unrelated attribute error.  The user's extension options are resolved here
against what the selected extensions declare, so each factory is called with
checked, typed values of its own options only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn

from deeploy_core.builtin.plugin import DEFAULT_ALLOCATOR
from deeploy_core.codegen.selection import check_selection
from deeploy_core.compilation import CompileSettings
from deeploy_core.deployer import ComposedDeployer, Deployer, DeployerWrapper
from deeploy_core.errors import DeeployError, PluginError
from deeploy_core.extensions import CodeTransformationExtension
from deeploy_core.options.assignments import OptionAssignment
from deeploy_core.options.listing import installed_extensions
from deeploy_core.options.resolution import SelectedExtension, resolve_options
from deeploy_core.plugins import PluginHost


@dataclass(frozen=True)
class DeployerChoice:
    """The user's selection, by name, of each layer of the deployer, and the extension options they gave."""

    platform: str
    memory_level: str | None = None
    tiler: str | None = None
    allocator: str = DEFAULT_ALLOCATOR
    settings: CompileSettings = field(default_factory=CompileSettings)
    """The core's settings (input shapes and types, quantization, …), which the platform's factory receives."""
    assignments: tuple[OptionAssignment, ...] = ()
    """Values for the selected extensions' declared options (``--option``, the short flags)."""


def compose_deployer(host: PluginHost, choice: DeployerChoice) -> ComposedDeployer:
    """Create the platform deployer and wrap it as ``choice`` says.

    Every selected name is looked up first, so a wrong one stops the compile
    with the list of installed ones before anything is made.  The option
    assignments are then resolved against what the selected extensions
    declare (:func:`~deeploy_core.options.resolution.resolve_options`), and
    each factory receives its extension's values as keyword arguments (the
    platform's after ``choice.settings``, the core's one
    :class:`~deeploy_core.compilation.CompileSettings`).  A platform's chain
    of code transformations is known only once the platform exists, so its
    own values are resolved first and everything, those transformations
    included, once more in full after it is made.  The
    allocator, the host and the resolved values go into the deployer's
    compilation, which the wrappers share.
    """
    static = _static_selection(host, choice)
    installed = installed_extensions(host)
    early = resolve_options(static, choice.assignments, installed, partial=True)
    platform_values = early["platform"].as_kwargs()
    deployer = _expect(host, "platform", choice.platform,
                       host.create("platform", choice.platform, choice.settings, **platform_values), inner=None)
    compilation = deployer.compilation
    platform_chain = compilation.platform.code_transformations if compilation.platform is not None else ()
    chain = check_selection(host, choice.platform, platform_chain, compilation.settings.code_transformations)
    listed = {entry.name for entry in static if entry.kind == "code_transformation"}
    from_chain = [SelectedExtension("code_transformation", extension) for extension in chain
                  if extension.name not in listed]
    resolved = resolve_options(_in_selection_order(static, from_chain, chain), choice.assignments, installed)
    compilation.extension_options = resolved

    allocator = host.create("allocator", choice.allocator, **resolved.values_of("allocator", choice.allocator))
    if not callable(getattr(allocator, "solve", None)):
        _blame(host, "allocator", choice.allocator, f"returned {type(allocator).__name__}, which has no solve()")
    compilation.allocator = allocator
    compilation.allocator_name = choice.allocator
    compilation.host = host

    if choice.memory_level is not None:
        wrapped = host.create("memory_level", choice.memory_level, deployer,
                              **resolved.values_of("memory_level", choice.memory_level))
        deployer = _expect(host, "memory_level", choice.memory_level, wrapped, inner=deployer)

    if choice.tiler is not None:
        wrapped = host.create("tiler", choice.tiler, deployer, allocator, **resolved.values_of("tiler", choice.tiler))
        deployer = _expect(host, "tiler", choice.tiler, wrapped, inner=deployer)
    return deployer


def _static_selection(host: PluginHost, choice: DeployerChoice) -> list[SelectedExtension]:
    """The extensions ``choice`` names, looked up (an unknown or unfitting name is a one-line error): the platform,
    memory level, tiler, allocator and the code transformations the user named, in that order."""
    selected = [SelectedExtension("platform", host.extension("platform", choice.platform)),
                SelectedExtension("allocator", host.extension("allocator", choice.allocator))]
    user_named = check_selection(host, choice.platform, (), choice.settings.code_transformations)
    if choice.memory_level is not None:
        _check_platform_fit(host, "memory_level", choice.memory_level, choice.platform)
        selected.insert(1, SelectedExtension("memory_level", host.extension("memory_level", choice.memory_level)))
    if choice.tiler is not None:
        if choice.memory_level is None:
            raise DeeployError(f"tiler {choice.tiler!r} needs a memory level: choose one with --memory-level")
        _check_platform_fit(host, "tiler", choice.tiler, choice.platform)
        selected.insert(-1, SelectedExtension("tiler", host.extension("tiler", choice.tiler)))
    return selected + [SelectedExtension("code_transformation", extension) for extension in user_named]


def _in_selection_order(static: list[SelectedExtension], from_chain: list[SelectedExtension],
                        chain: list[CodeTransformationExtension]) -> list[SelectedExtension]:
    """Platform, memory level, tiler, allocator, then the code transformations in the order they run."""
    single = [entry for entry in static if entry.kind != "code_transformation"]
    by_name = {entry.name: entry for entry in static + from_chain if entry.kind == "code_transformation"}
    return single + [by_name[extension.name] for extension in chain]


def _check_platform_fit(host: PluginHost, kind: str, name: str, platform: str) -> None:
    platforms = getattr(host.extension(kind, name), "platforms", ())
    if platforms and platform not in platforms:
        raise DeeployError(f"{kind} {name!r} does not support platform {platform!r} (supports: {', '.join(platforms)})")


def _expect(host: PluginHost, kind: str, name: str, made: object, inner: ComposedDeployer | None) -> ComposedDeployer:
    """``made`` as the deployer it must be: the platform's own (``inner`` None) or a wrapper around ``inner``."""
    if inner is None:
        if isinstance(made, DeployerWrapper) or not isinstance(made, Deployer):
            _blame(host, kind, name, f"returned {type(made).__name__}, expected a Deployer")
        return made
    if not isinstance(made, DeployerWrapper) or made.inner is not inner:
        _blame(host, kind, name, f"returned {type(made).__name__}, expected a DeployerWrapper around the deployer")
    return made


def _blame(host: PluginHost, kind: str, name: str, problem: str) -> NoReturn:
    origin = host.registered(kind, name).origin
    raise PluginError(
        origin.plugin,
        f"{origin.distribution} {origin.version}".strip(),
        f"creating {kind} {name!r}",
        TypeError(problem),
    )
