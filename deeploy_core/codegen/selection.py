"""Which installed code transformations a compile runs: only those its platform or its user names.

Installing a plugin must not change the code of every compile on the machine,
so a code-transformation extension is opt-in: it runs when the platform's
chain includes it by name (``Platform.code_transformations``) or the user
names it (``--code-transformation NAME``, repeatable).  The selection keeps
that order — the platform's names first, then the user's, each name once —
and within one transformation point the selected passes run in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Sequence

from deeploy_core.codegen.execution_block import CodeTransformation
from deeploy_core.errors import DeeployError, PluginError
from deeploy_core.extensions import CodeTransformationExtension, ExtensionOrigin
from deeploy_core.options.resolved import ExtensionOptions
from deeploy_core.plugins import PluginHost

KIND: Final = "code_transformation"
"""The extension kind this module selects (``CodeTransformationExtension.kind``)."""


@dataclass(frozen=True)
class PluginTransformation:
    """A selected code transformation: the pass, its descriptor, and the plugin to blame when it breaks."""

    extension: CodeTransformationExtension
    transformation: CodeTransformation
    origin: ExtensionOrigin

    def error(self, what: str, cause: BaseException) -> PluginError:
        """The one-line error naming the plugin that registered this transformation."""
        return PluginError(self.origin.plugin, f"{self.origin.distribution} {self.origin.version}".strip(), what,
                           cause)


def selected_names(platform_chain: Sequence[str], user: Sequence[str]) -> tuple[str, ...]:
    """The platform's names, then the user's, in order, each name once (its first place counts)."""
    return tuple(dict.fromkeys([*platform_chain, *user]))


def check_selection(host: PluginHost | None, platform: str, platform_chain: Sequence[str] = (),
                    user: Sequence[str] = ()) -> list[CodeTransformationExtension]:
    """The descriptors of the selected transformations, in selection order; a bad name is a one-line error.

    An unknown name lists the installed transformations; a transformation
    that declares platforms without ``platform`` says which it supports.
    """
    names = selected_names(platform_chain, user)
    if not names:
        return []
    available: dict[str, CodeTransformationExtension] = {}
    if host is not None:
        available = {e.name: e for e in host.extensions(KIND) if isinstance(e, CodeTransformationExtension)}
    listing = ", ".join(sorted(available)) or "none"
    chosen = []
    for name in names:
        asked = f"platform {platform!r} includes code transformation {name!r} in its chain" \
            if name in platform_chain else f"--code-transformation {name}"
        extension = available.get(name)
        if extension is None:
            raise DeeployError(f"{asked}, but no installed plugin registers a code transformation of that name "
                               f"(available: {listing})")
        if extension.platforms and platform not in extension.platforms:
            raise DeeployError(f"{asked}, but it does not support platform {platform!r} "
                               f"(supports: {', '.join(extension.platforms)})")
        chosen.append(extension)
    return chosen


def create_selected(host: PluginHost | None, platform: str, platform_chain: Sequence[str] = (),
                    user: Sequence[str] = (), options: ExtensionOptions | None = None) -> list[PluginTransformation]:
    """Check the selection and create each transformation with its resolved option values (``options``, none:
    the factory's defaults); a factory result without ``apply`` names its plugin."""
    made = []
    for extension in check_selection(host, platform, platform_chain, user):
        assert host is not None  # check_selection found the extension in it
        registered = host.registered(KIND, extension.name)
        values = options.values_of(KIND, extension.name) if options is not None else {}
        transformation = host.create(KIND, extension.name, **values)
        selected = PluginTransformation(extension, transformation, registered.origin)
        if not callable(getattr(transformation, "apply", None)):
            raise selected.error(f"creating {KIND} {extension.name!r}", TypeError(
                f"returned {type(transformation).__name__}, which has no apply(block, ctxt)"))
        made.append(selected)
    return made
