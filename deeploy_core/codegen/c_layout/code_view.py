"""The code view of C text: what the layout rewrites may touch, found with ``str`` and ``re`` at C speed.

Every rewrite of :mod:`deeploy_core.codegen.c_layout` must leave comments,
string and character literals and preprocessor lines alone.  Instead of a
per-character mask (a Python list as long as the file, walked in Python), the
rewrites read a *view*: the same text with each masked character replaced by
a filler, newlines kept, so that an offset or a line means the same in both and
``str.count``, ``str.find`` and compiled patterns do the scanning.
"""

from __future__ import annotations

import re

COMMENT_FILL = "\x01"
"""Stands for a character inside a block comment in the code view (a line may break there)."""
OTHER_FILL = "\x02"
"""Stands for a character of a literal, a ``//`` comment or a preprocessor line in the code view."""
FILLS = COMMENT_FILL + OTHER_FILL
BLANK_OR_FILL = " \t" + FILLS

_LITERALS_AND_COMMENTS = (
    r"/\*.*?(?:\*/|\Z)"                        # a block comment (to the end of the text if it never closes)
    r"|//[^\n]*"                                # a line comment
    r"|\"(?:\\.|[^\"\\\n])*\"?"                 # a string literal
    r"|'(?:\\.|[^'\\\n])*'?")                   # a character literal
_MASKED = re.compile(_LITERALS_AND_COMMENTS + r"|\#(?:[^\n]*\\\n)*[^\n]*", re.S)
"""Every alternative starts with a fixed character, so the search skips code quickly; a ``#`` outside a literal
starts a preprocessor line in generated C (its indentation stays code, which is blank)."""
_MASKED_IN_DIRECTIVE = re.compile(_LITERALS_AND_COMMENTS, re.S)


def _fill(match: re.Match[str]) -> str:
    masked = match.group(0)
    filler = COMMENT_FILL if masked.startswith("/*") else OTHER_FILL
    if "\n" not in masked:
        return filler * len(masked)
    return "\n".join(filler * len(part) for part in masked.split("\n"))


def code_view(text: str) -> str:
    """``text`` with every character of a comment, literal or preprocessor line replaced by a filler.

    Block-comment characters become :data:`COMMENT_FILL`, the others :data:`OTHER_FILL`; newlines stay, so an
    offset or a line number means the same in the text and in its view.
    """
    return _MASKED.sub(_fill, text)


def directive_view(line: str) -> str:
    """The code view of one preprocessor line: its comments and literals masked, the rest code."""
    return _MASKED_IN_DIRECTIVE.sub(_fill, line)


def replace_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each span ``(start, end)`` replaced by its string; of two overlapping spans the first wins
    (``[0 + 0]``: both ``0 +`` and ``+ 0`` match, and only one may go)."""
    pieces, previous = [], 0
    for start, end, replacement in sorted(spans):
        if start < previous:
            continue
        pieces += [text[previous:start], replacement]
        previous = end
    return "".join(pieces) + text[previous:]
