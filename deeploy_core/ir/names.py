"""Turning model-supplied names into safe, unique C identifiers.

Names in an ONNX file are arbitrary strings from an untrusted source: they may
contain quotes, newlines, ``*/``, ``#include`` or non-ASCII text, collide with C
keywords, or differ only in characters C does not allow.  Every identifier the
generator emits goes through :class:`CNameMangler`, so no model name ever reaches
C verbatim.  Comments use :func:`c_comment_text`.
"""

from __future__ import annotations

import functools
import re

C_KEYWORDS = frozenset(
    """auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    _Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert _Thread_local
    bool true false NULL main""".split()
)
_MAX_STEM = 48
_STEM_HEAD = 16
"""A long name keeps its first ``_STEM_HEAD`` characters and its end, where exporters put what tells tensors apart
(``.../conv2d_3/BiasAdd``, ``..._weight``, ``..._output_0``)."""


def _stem(name: str) -> str:
    """``name`` as the lower-case ASCII letters, digits and underscores of a C identifier, at most 48 of them.

    A longer name keeps its head and tail with a double underscore where the middle was cut; no hash is added:
    when two names shorten to the same stem, :class:`CNameMangler` numbers the second (a hash only to break a
    collision, issue 34).
    """
    ascii_only = name.encode("ascii", "ignore").decode()
    stem = re.sub(r"[^A-Za-z0-9]+", "_", ascii_only).strip("_").lower()
    if len(stem) > _MAX_STEM:
        tail = stem[-(_MAX_STEM - _STEM_HEAD - 2):].lstrip("_")
        stem = f"{stem[:_STEM_HEAD].rstrip('_')}__{tail}"
    return stem or "t"


class CNameMangler:
    """Hands out C identifiers ``<prefix>_<stem>`` that are unique within one generated network.

    The same input name always maps to the same identifier (so output is
    deterministic), and two different names never share one.
    """

    def __init__(self, prefix: str = "dc") -> None:
        self._prefix = prefix
        self._assigned: dict[str, str] = {}
        self._taken: set[str] = set()

    def mangle(self, name: str, kind: str = "") -> str:
        """The identifier for ``name`` (``kind`` groups names, e.g. ``w`` for weights)."""
        key = f"{kind}\x00{name}"
        if key in self._assigned:
            return self._assigned[key]
        head = f"{self._prefix}_{kind}_" if kind else f"{self._prefix}_"
        candidate = head + _stem(name)
        unique, counter = candidate, 1
        while unique in self._taken or unique in C_KEYWORDS:
            counter += 1
            unique = f"{candidate}_{counter}"
        self._taken.add(unique)
        self._assigned[key] = unique
        return unique


_COMMENT_MARKS = re.compile(r"([*/])(?=[*/])")
"""A ``*`` or ``/`` followed by another: splitting every such pair leaves no ``*/``, ``/*`` or ``//``."""
_TRIGRAPH_START = re.compile(r"\?(?=\?)")


_PRINTABLE = str.maketrans({**{code: "?" for code in range(32)}, 127: "?", ord("\\"): "/"})
"""Backslashes (which would splice lines) to ``/``, control characters to ``?``."""


@functools.lru_cache(maxsize=4096)
def c_comment_text(text: str, limit: int = 80) -> str:
    """``text`` made safe inside a ``/* */`` comment: printable ASCII on one line, no comment marks.

    The steps run in an order where no later one can undo an earlier one:
    non-ASCII text becomes ``\\x..`` escapes, backslashes (which would splice
    lines) become ``/``, control characters ``?``, and only then is every
    adjacent pair of ``*`` and ``/`` split by a space, so that neither the end
    of the comment nor a nested opener (``-Wcomment``) can appear, whatever
    text precedes or follows.  ``??`` is split as well, so that no trigraph
    can form.  Cached: a network's comments name the same tensors many times.
    """
    ascii_only = text.encode("ascii", "backslashreplace").decode()
    printable = ascii_only.translate(_PRINTABLE)
    if len(printable) > limit:
        printable = printable[: max(limit - 3, 0)] + "..."
    safe = _TRIGRAPH_START.sub("? ", _COMMENT_MARKS.sub(r"\1 ", printable))
    if safe[:1] in ("*", "/"):
        safe = " " + safe
    if safe[-1:] in ("*", "/"):
        safe += " "
    return safe


def c_string(text: str) -> str:
    """``text`` as a C string literal holding only printable ASCII (anything else as octal escapes)."""
    parts = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '"\\?':
            parts.append("\\" + char)
        elif 32 <= byte < 127:
            parts.append(char)
        else:
            parts.append(f"\\{byte:03o}")
    return '"' + "".join(parts) + '"'
