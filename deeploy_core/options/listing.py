"""The options every installed extension declares, in the one order all listings share.

``compile --help``, ``plugins --json`` and the reference in ``docs/cli.rst``
show the same schema; gathering and describing it here keeps them alike:
kinds in the order a compile selects them, extensions by name, options in
the order their extension declares them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deeploy_core.options.resolution import SelectedExtension
from deeploy_core.options.spec import OptionSpec

if TYPE_CHECKING:
    from deeploy_core.plugins import PluginHost

OPTION_KINDS = ("platform", "memory_level", "tiler", "allocator", "code_transformation")
"""The kinds of extension a compile selects, and so the kinds that may declare options, in selection order."""


def installed_extensions(host: PluginHost) -> list[SelectedExtension]:
    """Every installed extension of a kind that may declare options: by kind (:data:`OPTION_KINDS`), then by name.

    Read from the registry itself rather than through ``host.extensions``:
    listing a kind is not using it, so it must not print the warnings about
    duplicate names that a compile using that kind prints.
    """
    return [SelectedExtension(kind, registered.extension) for kind in OPTION_KINDS
            for registered in host.registry.all(kind)]


def declared_options(host: PluginHost) -> list[SelectedExtension]:
    """Every installed extension that declares options, in the order of :func:`installed_extensions`."""
    return [entry for entry in installed_extensions(host) if entry.options]


def option_metavar(spec: OptionSpec) -> str:
    """``NAME=VALUE`` as a listing shows it: ``cores=INT``, ``strategy=max|min|random-max``."""
    if spec.choices is not None:
        return f"{spec.name}={'|'.join(str(choice) for choice in spec.choices)}"
    return f"{spec.name}={spec.type_name.upper()}"


def option_summary(spec: OptionSpec) -> str:
    """The help text with the default and, for a bounded number, the range: what a listing says after the name.

    An option whose default is None ("unset") shows no default: its help says
    what unset means (a level keeps its hierarchy's size).
    """
    facts = [] if spec.default is None else [f"default {spec.default_text()}"]
    if spec.choices is None and (spec.minimum is not None or spec.maximum is not None):
        facts.append(spec.expected())
    return f"{spec.help} ({'; '.join(facts)})" if facts else spec.help
