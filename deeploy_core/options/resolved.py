"""The option values one compile resolved, per selected extension: what factories got and report.json records.

Resolution (:mod:`deeploy_core.options.resolution`) turns the user's
assignments and the declared defaults into one :class:`ExtensionValues` per
selected extension.  :class:`ExtensionOptions` keeps them together, in
selection order, so that the compilation can say which values each extension
ran with (``compilation.extension_options["platform"]["cores"]``) and the
report can record them in a form that does not depend on how they were
given (``--cores 8``, ``--option cores=8`` or the default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterator, Mapping

from deeploy_core.options.spec import OptionValue

SINGLE_KINDS = ("platform", "memory_level", "tiler", "allocator")
"""Kinds of which a compile selects at most one extension; code transformations may be several."""

KIND_LABELS = {"platform": "platform", "memory_level": "memory level", "tiler": "tiler", "allocator": "allocator",
               "code_transformation": "code transformation"}
"""How messages name each kind of extension that may take options."""


def owner_label(kind: str, name: str) -> str:
    """How messages name an extension: ``platform 'pulp-cluster'``."""
    return f"{KIND_LABELS.get(kind, kind)} {name!r}"


@dataclass(frozen=True)
class ExtensionValues:
    """The values of every option one selected extension declares (given or default), by option name."""

    kind: str
    name: str
    values: Mapping[str, OptionValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", MappingProxyType(dict(sorted(self.values.items()))))

    def __getitem__(self, option: str) -> OptionValue:
        return self.values[option]

    def as_kwargs(self) -> dict[str, OptionValue]:
        """The values as the keyword arguments the extension's factory receives."""
        return dict(self.values)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "values": dict(self.values)}


@dataclass(frozen=True)
class ExtensionOptions:
    """The resolved option values of every extension a compile selected, in selection order.

    ``options["tiler"]`` is the selected tiler's :class:`ExtensionValues`
    (a KeyError when the compile selects none); code transformations, of which
    there may be several, are found with :meth:`get` by name.
    """

    extensions: tuple[ExtensionValues, ...] = ()

    def __getitem__(self, kind: str) -> ExtensionValues:
        found = [entry for entry in self.extensions if entry.kind == kind]
        if len(found) != 1:
            raise KeyError(f"this compile selects {len(found)} {KIND_LABELS.get(kind, kind)} extensions; "
                           f"use get(kind, name)" if found else f"this compile selects no {kind}")
        return found[0]

    def get(self, kind: str, name: str) -> ExtensionValues | None:
        """The values of extension ``name`` of ``kind``, or None when the compile does not select it."""
        return next((entry for entry in self.extensions if entry.kind == kind and entry.name == name), None)

    def values_of(self, kind: str, name: str) -> dict[str, OptionValue]:
        """The keyword arguments for extension ``name``'s factory (none when it is not selected)."""
        entry = self.get(kind, name)
        return entry.as_kwargs() if entry is not None else {}

    def __iter__(self) -> Iterator[ExtensionValues]:
        return iter(self.extensions)

    def __len__(self) -> int:
        return len(self.extensions)

    def to_report(self) -> dict[str, Any]:
        """report.json's ``options``: per kind the selected extension's name and values (code transformations:
        a list in selection order); keys and values sorted, so two compiles with the same values agree."""
        report: dict[str, Any] = {}
        for entry in self.extensions:
            if entry.kind in SINGLE_KINDS:
                report[entry.kind] = entry.to_json()
            else:
                report.setdefault(entry.kind, []).append(entry.to_json())
        return dict(sorted(report.items()))
