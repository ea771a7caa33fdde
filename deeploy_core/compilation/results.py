"""Typed per-extension results of one compilation, keyed by their type.

An extension (a memory level, a tiler, a platform's cost model) computes
things the core knows nothing about but other extensions read: the hierarchy
the memory level chose, the tiler's solution and tiles.  Keying each result by
its own class instead of by a string means a reader names the type it wants
(``compilation.results[TilingSolution]``) and gets a value of exactly that
type: a typo is an import error, not a silent ``None``, and a writer cannot
store something else under the key.
"""

from __future__ import annotations

from typing import Iterator, TypeVar, cast

T = TypeVar("T")


def _type_label(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


class Results:
    """At most one value per type; ``results[T]`` is a ``T`` (checked when it is stored).

    Iteration yields the stored types sorted by module and qualified name, so
    anything derived from it is the same whatever order extensions wrote in.
    """

    def __init__(self) -> None:
        self._values: dict[type, object] = {}

    def __getitem__(self, kind: type[T]) -> T:
        try:
            value = self._values[kind]
        except KeyError:
            stored = ", ".join(kind.__name__ for kind in self) or "none"
            raise KeyError(f"this compilation has no {kind.__name__} result (it has: {stored})") from None
        return cast(T, value)  # checked against ``kind`` by __setitem__

    def get(self, kind: type[T]) -> T | None:
        """The result of type ``kind``, or None when no extension stored one."""
        value = self._values.get(kind)
        return None if value is None else cast(T, value)

    def __setitem__(self, kind: type[T], value: T) -> None:
        if not isinstance(kind, type):
            raise TypeError(f"results are keyed by type, got {kind!r}")
        if not isinstance(value, kind):
            raise TypeError(f"results[{kind.__name__}] must be a {kind.__name__}, got {type(value).__name__}")
        self._values[kind] = value

    def __delitem__(self, kind: type) -> None:
        del self._values[kind]

    def __contains__(self, kind: object) -> bool:
        return kind in self._values

    def __iter__(self) -> Iterator[type]:
        return iter(sorted(self._values, key=_type_label))

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Results({', '.join(kind.__name__ for kind in self)})"
