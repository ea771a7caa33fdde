"""Lines of at most :data:`MAX_COLUMNS`: one statement per line first, then breaks at commas or operators.

A break never falls inside a literal or a ``//`` comment; a block comment
broken in two is closed and reopened (every comment closes on its own line, so
no text of the model can reach the next line's code); a preprocessor line goes
on with a backslash.  A break that would not shorten the line is not made.
"""

from __future__ import annotations

import re

from deeploy_core.codegen.c_layout.code_view import COMMENT_FILL, FILLS, OTHER_FILL, code_view, directive_view

MAX_COLUMNS = 120
"""The longest line the pass leaves (the C writer's limit, issue 34)."""
_BREAK_OPERATORS = (" && ", " || ", " ? ", " : ", " + ", " - ", " * ", " / ", " = ", " << ", " >> ", " | ", " & ")


_STATEMENT_MARKS = re.compile(r"[(){};]")
_GOES_ON = re.compile(r" +(else|while)\b")


def _statement_starts(line: str, view: str, base: int) -> list[int]:
    """Where statements after the first begin on ``line``: after a ``;``, a block's ``{`` or a ``}`` outside
    parentheses (not the ``;`` of a ``for`` header, not ``{`` of an initializer, not ``} else``)."""
    starts, depth = [], 0
    for match in _STATEMENT_MARKS.finditer(view):
        mark, after = match.group(0), match.end()
        if mark in "()":
            depth += 1 if mark == "(" else -1
            continue
        if depth != 0 or after <= base or after >= len(line) or line[after] != " " or not line[after:].strip():
            continue
        if mark == "{" and view[:match.start()].rstrip(" " + FILLS)[-1:] in ("=", ",", "("):
            continue
        if mark == "}" and _GOES_ON.match(view, after) is not None:
            continue
        starts.append(after)
    return starts


def _one_statement_per_line(line: str, view: str) -> list[str]:
    """``line`` split so that each statement (or block brace) starts a line of its own."""
    base = len(line) - len(line.lstrip())
    pieces, previous = [], 0
    for start in [*_statement_starts(line, view, base), len(line)]:
        text = line[previous:start].strip(" ")
        if text:
            pieces.append(" " * base + text)
        previous = start
    return pieces


def _break_at(line: str, view: str, floor: int) -> int | None:
    """Where to break ``line`` (the index the next line starts at), or None when no space qualifies.

    Only a space in code or inside a block comment qualifies (a comment simply continues on the next line);
    never one in a literal or a ``//`` comment.
    """
    limit = min(MAX_COLUMNS, len(line) - 1)

    def free(position: int) -> bool:
        if line[position - 1] != " " or view[position - 1] == OTHER_FILL:
            return False
        return view[position - 1] != COMMENT_FILL or position <= MAX_COLUMNS - 3  # room to close the comment

    candidates = [position for position in range(limit, floor, -1) if free(position)]
    for position in candidates:
        if line[position - 2] == ",":
            return position
    for position in candidates:
        if any(line.startswith(op, position - 1) for op in _BREAK_OPERATORS):
            return position
    return candidates[0] if candidates else None


def wrap(lines: list[str]) -> list[str]:
    """``lines`` with every line over :data:`MAX_COLUMNS` split into statements or broken (one round; the caller
    re-indents and calls again until nothing changes)."""
    views = code_view("\n".join(lines)).split("\n")
    result = []
    for line, view in zip(lines, views):
        if len(line) <= MAX_COLUMNS:
            result.append(line)
            continue
        preprocessor = line.lstrip().startswith("#")
        if preprocessor:
            view = directive_view(line)
        if not preprocessor and len(pieces := _one_statement_per_line(line, view)) > 1:
            result.extend(pieces)  # indented by the next reindent, then wrapped if need be
            continue
        base = len(line) - len(line.lstrip())
        while len(line) > MAX_COLUMNS:
            cut = _break_at(line, view, base + 8)
            if cut is None:
                break
            # A comment broken in two is closed and reopened, so that every comment closes on its own line
            # (what tests/test_security.py checks: no text of the model can reach the next line's code).
            in_comment = view[cut - 1] == COMMENT_FILL and not preprocessor
            rest = line[cut:].lstrip(" ")
            prefix = " " * (base + (0 if preprocessor else 8)) + ("/* " if in_comment else "")
            if len(prefix) + len(rest) >= len(line):
                break  # the continuation would be no shorter: leave the line long rather than loop
            result.append(line[:cut].rstrip() + (" \\" if preprocessor else " */" if in_comment else ""))
            view = (COMMENT_FILL * len(prefix) if in_comment else prefix) + view[len(line) - len(rest):]
            line = prefix + rest
        result.append(line)
    return result
