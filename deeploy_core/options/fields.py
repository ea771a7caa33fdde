"""Options declared as the fields of a frozen dataclass: each option's name, type and default stated once.

An extension whose configuration is one dataclass (the built-in tilers'
:class:`~deeploy_core.tiling.tiler_options.TilerOptions`) marks the fields a
user may set with ``field(default=..., metadata=option_metadata(help, ...))``.
:func:`dataclass_option_specs` makes the :class:`~.spec.OptionSpec` of each
such field from its name, its annotated type and its default, plus the help,
choices and bounds of the metadata; so the descriptor's ``options``, the
factory's keywords and the configuration's defaults are one statement and
cannot drift apart.  Fields without the metadata (a tiler's name, set by its
registration) are configuration, not options.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, fields, is_dataclass

from deeploy_core.options.spec import OptionSpec, OptionValue

OPTION_METADATA = "deeploy_core.option"
"""The key of a dataclass field's metadata that makes the field an option."""


@dataclass(frozen=True)
class OptionMetadata:
    """What an option field adds to its name, type and default: its help, choices and bounds (see OptionSpec)."""

    help: str
    choices: tuple[OptionValue, ...] | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None


def option_metadata(help: str, choices: Iterable[OptionValue] | None = None, minimum: int | float | None = None,
                    maximum: int | float | None = None) -> Mapping[str, OptionMetadata]:
    """The ``metadata`` of ``dataclasses.field`` that declares the field an option (``choices``: any iterable, e.g.
    the keys of a table of the values' meanings)."""
    return {OPTION_METADATA: OptionMetadata(help, tuple(choices) if choices is not None else None, minimum, maximum)}


def dataclass_option_specs(cls: type) -> tuple[OptionSpec, ...]:
    """The OptionSpec of every field of dataclass ``cls`` that carries :func:`option_metadata`, in field order."""
    if not is_dataclass(cls):
        raise TypeError(f"{cls.__name__} is not a dataclass")
    hints = typing.get_type_hints(cls)
    specs = []
    for declared in fields(cls):
        metadata = declared.metadata.get(OPTION_METADATA)
        if metadata is None:
            continue
        if declared.default is MISSING:
            raise TypeError(f"{cls.__name__}.{declared.name}: an option needs a default (dataclasses.field(default=...))")
        specs.append(OptionSpec(declared.name, hints[declared.name], declared.default, metadata.help,
                                metadata.choices, metadata.minimum, metadata.maximum))
    return tuple(specs)
