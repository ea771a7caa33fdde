"""The table of extensions by kind and name, built from what plugins registered.

Each (kind, name) holds exactly one extension: the host resolves duplicate
registrations before building the table (the first registration wins, see
:mod:`deeploy_core.plugins.duplicates`) and hands the ignored ones over too, so
that whoever looks up a kind can tell the user about them.
"""

from __future__ import annotations

import difflib

from deeploy_core.errors import ExtensionNotFoundError
from deeploy_core.extensions import EXTENSION_TYPES, ExtensionOrigin, RegisteredExtension
from deeploy_core.plugins.contribution import Contribution
from deeploy_core.plugins.duplicates import Duplicate

# Contribution is named here too: whoever builds a registry builds it from contributions.
__all__ = ["Contribution", "ExtensionRegistry"]


class ExtensionRegistry:
    """Extensions of working plugins, looked up by kind and explicit name only.

    ``contributions`` must name each (kind, name) once; ``duplicates`` are the
    registrations that were ignored to make it so.
    """

    def __init__(self, contributions: list[Contribution], duplicates: tuple[Duplicate, ...] = ()) -> None:
        self._table: dict[str, dict[str, RegisteredExtension]] = {kind: {} for kind in EXTENSION_TYPES}
        for contribution in contributions:
            record = contribution.record
            origin = ExtensionOrigin(record.name, record.distribution, record.version)
            extension = contribution.extension
            if extension.name in self._table[extension.kind]:
                raise ValueError(f"{extension.kind} {extension.name!r} is contributed twice; resolve duplicates first")
            self._table[extension.kind][extension.name] = RegisteredExtension(extension, origin)
        self._duplicates = duplicates

    def duplicates(self, kind: str) -> list[Duplicate]:
        """The ignored registrations of ``kind``, in registration order."""
        return [duplicate for duplicate in self._duplicates if duplicate.kind == kind]

    def get(self, kind: str, name: str) -> RegisteredExtension:
        """The extension ``name`` of ``kind``; a clear error lists the available names."""
        table = self._kind_table(kind)
        if name not in table:
            available = ", ".join(sorted(table)) or "none"
            guess = closest_name(name, sorted(table))
            hint = f"; did you mean {guess!r}?" if guess else ""
            raise ExtensionNotFoundError(f"no {kind} named {name!r} (available: {available}){hint}")
        return table[name]

    def all(self, kind: str) -> list[RegisteredExtension]:
        """Every extension of ``kind``, sorted by name."""
        table = self._kind_table(kind)
        return [table[name] for name in sorted(table)]

    def _kind_table(self, kind: str) -> dict[str, RegisteredExtension]:
        if kind not in self._table:
            raise ExtensionNotFoundError(f"unknown extension kind {kind!r} (kinds: {', '.join(self._table)})")
        return self._table[kind]


def closest_name(name: str, names: list[str]) -> str | None:
    """The one name ``name`` most likely meant: the only one it starts (or ends) a word of, else the closest
    spelling (difflib), else None.  ``generic`` → ``generic-c``, ``pulp`` → ``pulp-cluster``, ``firstfit`` →
    ``first-fit``."""
    lowered = name.lower()
    prefixed = [candidate for candidate in names if candidate.lower().startswith(lowered)
                or lowered in candidate.lower().replace("_", "-").split("-")]
    if len(prefixed) == 1:
        return prefixed[0]
    close = difflib.get_close_matches(lowered, names, n=1, cutoff=0.6)
    return close[0] if close else None
