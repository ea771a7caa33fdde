"""Building a deployer from names: platform deployer → memory-level wrapper → tiler wrapper.

Every piece is chosen by its registered name (never by which plugin happened to
load first), and every factory result is checked, so a plugin that returns the
wrong thing is named at composition time instead of failing later with an
unrelated attribute error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deeploy_core.builtin.plugin import DEFAULT_ALLOCATOR
from deeploy_core.codegen.selection import check_selection
from deeploy_core.deployer.base import Deployer
from deeploy_core.deployer.wrapper import DeployerWrapper
from deeploy_core.errors import DeeployError, PluginError
from deeploy_core.plugins import PluginHost


@dataclass(frozen=True)
class DeployerChoice:
    """The user's selection, by name, of each layer of the deployer."""

    platform: str
    memory_level: str | None = None
    tiler: str | None = None
    allocator: str = DEFAULT_ALLOCATOR
    options: dict[str, Any] = field(default_factory=dict)


def compose_deployer(host: PluginHost, choice: DeployerChoice) -> Deployer:
    """Create the platform deployer and wrap it as ``choice`` says.

    The allocator and the host go into the deployer's compilation, which the
    wrappers share.  The code transformations the compile selects (the
    platform's chain and the ``code_transformations`` option) are checked here,
    so that a wrong name stops the compile before any stage runs.
    """
    deployer = host.create("platform", choice.platform, **choice.options)
    _expect(host, "platform", choice.platform, deployer, inner=None)
    allocator = host.create("allocator", choice.allocator)
    if not callable(getattr(allocator, "solve", None)):
        _blame(host, "allocator", choice.allocator, f"returned {type(allocator).__name__}, which has no solve()")
    compilation = deployer.compilation
    compilation.allocator = allocator
    compilation.allocator_name = choice.allocator
    compilation.host = host
    platform_chain = compilation.platform.code_transformations if compilation.platform is not None else ()
    check_selection(host, choice.platform, platform_chain, compilation.settings.code_transformations)

    if choice.memory_level is not None:
        _check_platform_fit(host, "memory_level", choice.memory_level, choice.platform)
        wrapped = host.create("memory_level", choice.memory_level, deployer)
        _expect(host, "memory_level", choice.memory_level, wrapped, inner=deployer)
        deployer = wrapped

    if choice.tiler is not None:
        if choice.memory_level is None:
            raise DeeployError(f"tiler {choice.tiler!r} needs a memory level: choose one with --memory-level")
        _check_platform_fit(host, "tiler", choice.tiler, choice.platform)
        wrapped = host.create("tiler", choice.tiler, deployer, allocator)
        _expect(host, "tiler", choice.tiler, wrapped, inner=deployer)
        deployer = wrapped
    return deployer


def _check_platform_fit(host: PluginHost, kind: str, name: str, platform: str) -> None:
    platforms = getattr(host.extension(kind, name), "platforms", ())
    if platforms and platform not in platforms:
        raise DeeployError(f"{kind} {name!r} does not support platform {platform!r} (supports: {', '.join(platforms)})")


def _expect(host: PluginHost, kind: str, name: str, made: object, inner: Deployer | None) -> None:
    if inner is None:
        if isinstance(made, DeployerWrapper) or not isinstance(made, Deployer):
            _blame(host, kind, name, f"returned {type(made).__name__}, expected a Deployer")
        return
    if not isinstance(made, DeployerWrapper) or made.inner is not inner:
        _blame(host, kind, name, f"returned {type(made).__name__}, expected a DeployerWrapper around the deployer")


def _blame(host: PluginHost, kind: str, name: str, problem: str) -> None:
    origin = host.registered(kind, name).origin
    raise PluginError(
        origin.plugin,
        f"{origin.distribution} {origin.version}".strip(),
        f"creating {kind} {name!r}",
        TypeError(problem),
    )
