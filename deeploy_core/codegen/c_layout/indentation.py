"""Indentation by structure: four spaces per open brace, eight more for a statement that goes on.

Kernels come from many templates, each indented its own way; the finished
text is re-indented from its braces and parentheses, so that nesting shows.
"""

from __future__ import annotations

import re

from deeploy_core.codegen.c_layout.code_view import BLANK_OR_FILL, FILLS, code_view

INDENT = "    "
CONTINUATION = " " * 8

_CONTROL_LINE = re.compile(r"(for|while|if|else)\b")


_BRACES = re.compile(r"[{}]")


def reindent(lines: list[str]) -> list[str]:
    """Four spaces per open brace; eight more for a line continuing a statement; comments inside blocks follow.

    A line ending in ``,`` continues its statement (a declaration list, say) unless it lists the elements of an
    initializer, whose braces are told from a block's by what precedes them (``=``, ``,`` or another
    initializer's ``{``).
    """
    views = code_view("\n".join(lines)).split("\n")
    result = []
    parens = 0
    braces: list[bool] = []  # per open brace: does it open an initializer (True) or a block (False)?
    previous_code = ""  # the last character of code before the current line
    continues = control = False
    for line, view in zip(lines, views):
        stripped = line.lstrip()
        lead = len(line) - len(stripped)
        if not stripped:
            result.append("")
            continue
        starts_masked = view[lead] in FILLS
        if starts_masked and not stripped.startswith(("/*", "//", "#")):  # inside a comment or literal from above
            result.append(line.rstrip())
            continue
        if stripped.startswith("#"):
            result.append(stripped.rstrip())
            continue
        closing = len(stripped) - len(stripped.lstrip("}"))
        level = max(len(braces) - closing, 0)
        extra = ""
        if (parens > 0 or continues) and not stripped.startswith(("/*", "}")):
            extra = INDENT if control else CONTINUATION  # the body of a brace-less for/if/while is one level in
        result.append(INDENT * level + extra + stripped.rstrip())
        for brace in _BRACES.finditer(view) if "{" in view or "}" in view else ():
            if brace.group(0) == "}":
                if braces:
                    braces.pop()
                continue
            before = view[:brace.start()].rstrip(BLANK_OR_FILL)[-1:] or previous_code
            braces.append(before in "=," or (before == "{" and bool(braces) and braces[-1]))
        parens += view.count("(") + view.count("[") - view.count(")") - view.count("]")
        last = view.strip(BLANK_OR_FILL)  # first and last characters of code (what lies between does not matter)
        if last:
            previous_code = last[-1]
            listing = bool(braces) and braces[-1]
            continues = last[-1] not in ";{}:" and not (last[-1] == "," and listing)
            control = parens == 0 and _CONTROL_LINE.match(last) is not None and last[-1] in ")e"
    return result
