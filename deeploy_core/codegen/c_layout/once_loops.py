"""Loops with trip count 1 become blocks: ``for (T v = 0; v < 1; ++v) BODY`` runs BODY once with ``v`` = 0.

Templates emit them for a batch of 1, one group or one tile; a reader has to
work out that they run once.  The block ``{ const T v = 0; BODY }`` says so
(the declaration only where BODY reads ``v``), and a loop pragma above the loop
(``#pragma GCC ivdep``, in its ``#if`` guard) goes with it, since a pragma
meant for a loop is an error before a block.  A ``continue`` or ``break`` of
the loop itself (not of a loop or ``switch`` nested in it) ends its one
iteration: in the block it becomes a ``goto`` to a label at the block's end
(left as it was, it would belong to the enclosing loop).
"""

from __future__ import annotations

import re

from deeploy_core.codegen.c_layout.code_view import code_view, replace_spans

_ONCE_LOOP = re.compile(
    r"for\s*\(\s*(?P<type>(?:const\s+)?(?:int(?:8|16|32|64)_t|uint(?:8|16|32|64)_t|int|unsigned|long|size_t))\s+"
    r"(?P<var>[A-Za-z_]\w*)\s*=\s*0\s*;\s*(?P=var)\s*<\s*1\s*;\s*(?:\+\+\s*(?P=var)|(?P=var)\s*\+\+|(?P=var)\s*\+=\s*1)"
    r"\s*\)\s*")


_BRACKET_PATTERNS = {"{": re.compile(r"[{}]"), "(": re.compile(r"[()]")}
_NESTING_OR_END = re.compile(r"[()\[\]{};]")
_JUMP = re.compile(r"\b(?:continue|break)\b")
_NESTED = re.compile(r"\b(?:for|while|do|switch)\b")
_CONTROL = re.compile(r"(for|while|if|switch)\b\s*")
_ELSE = re.compile(r"\s*else\b")


def _matching(view: str, start: int) -> int:
    """The index of the bracket closing the one at ``start`` (``{`` or ``(``), in the code view."""
    opening = view[start]
    depth = 0
    for match in _BRACKET_PATTERNS[opening].finditer(view, start):
        depth += 1 if match.group(0) == opening else -1
        if depth == 0:
            return match.start()
    raise ValueError(f"unbalanced {opening!r} in generated C")


def _statement_end(view: str, start: int) -> int:
    """The index just after the statement starting at ``start``: a block, a loop or ``if`` with its body, or up to
    ``;``."""
    index = start
    while view[index].isspace():
        index += 1
    if view[index] == "{":
        return _matching(view, index) + 1
    keyword = _CONTROL.match(view, index)
    if keyword is not None:
        end = _statement_end(view, _matching(view, keyword.end()) + 1)
        if keyword.group(1) == "if":
            rest = _ELSE.match(view, end)
            if rest is not None:
                end = _statement_end(view, rest.end())
        return end
    depth = 0
    for match in _NESTING_OR_END.finditer(view, index):
        char = match.group(0)
        if char == ";":
            if depth == 0:
                return match.end()
        else:
            depth += 1 if char in "([{" else -1
    raise ValueError("a statement without ';' in generated C")


def _own_jumps(view: str, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of the ``continue`` and ``break`` keywords of the loop whose body lies between ``start`` and ``end``.

    A ``continue`` inside a nested loop, or a ``break`` inside a nested loop or ``switch``, belongs to that
    statement; the spans of the nested statements are found only when the body has a jump at all.
    """
    jumps = list(_JUMP.finditer(view, start, end))
    if not jumps:
        return []
    loops: list[tuple[int, int]] = []
    switches: list[tuple[int, int]] = []
    for match in _NESTED.finditer(view, start, end):
        if match.group(0) == "while" and view[:match.start()].rstrip().endswith("}"):
            continue  # the 'while' of a do-while, inside the span of its 'do'
        span = (match.start(), _statement_end(view, match.start()))
        (switches if match.group(0) == "switch" else loops).append(span)
    own = []
    for jump in jumps:
        enclosing = loops + switches if jump.group(0) == "break" else loops
        if not any(low < jump.start() < high for low, high in enclosing):
            own.append(jump.span())
    return own


def unroll_once_loops(text: str) -> str:
    """Every ``for (T v = 0; v < 1; ++v) BODY`` outside comments and literals becomes ``{ const T v = 0; BODY }``.

    The loops are found in the code view, so a loop quoted in a comment is never matched, and rewritten last
    first, so that an earlier loop's position still holds; the view is kept in step with the text (an inserted
    declaration is code) instead of recomputed.
    """
    view = code_view(text)
    found = [match for match in _ONCE_LOOP.finditer(view)
             if match.start() == 0 or not (view[match.start() - 1].isalnum() or view[match.start() - 1] == "_")]
    for number, match in reversed(list(enumerate(found))):
        body_start = match.end()
        body_end = _statement_end(view, body_start)
        variable, c_type = match.group("var"), match.group("type").replace("const ", "")
        used = re.search(rf"\b{re.escape(variable)}\b", view[body_start:body_end]) is not None
        declaration = f"const {c_type} {variable} = 0; " if used else ""
        body, body_view = text[body_start:body_end], view[body_start:body_end]
        jumps = _own_jumps(view, body_start, body_end)
        label = f"dc_once_{number}" if jumps else ""  # labels live in their own name space, one per file here
        if jumps:  # 'continue' and 'break' end the one iteration: a jump to the end of the block does the same
            gotos = [(start - body_start, end - body_start, f"goto {label}") for start, end in jumps]
            body, body_view = replace_spans(body, gotos), replace_spans(body_view, gotos)
        ending = f"{label}:; " if label else ""
        if body_view.lstrip().startswith("{"):
            offset = body_view.index("{") + 1
            rest = len(body) - len(body[offset:].lstrip(" "))
            closing = body_view.rindex("}")
            if ending and "\n" in body_view[rest:closing]:  # a block over several lines: the label gets a line
                closing = body_view.rindex("\n", rest, closing) + 1
                ending = ending.rstrip() + "\n"
            opening = body[:offset] + " " + declaration
            text_pieces = [opening, body[rest:closing], ending, body[closing:]]
            view_pieces = [opening, body_view[rest:closing], ending, body_view[closing:]]
        elif declaration or label:
            text_pieces = ["{ " + declaration, body, " " + ending + "}"]
            view_pieces = ["{ " + declaration, body_view, " " + ending + "}"]
        else:
            text_pieces, view_pieces = [body], [body_view]
        start = _loop_pragmas_start(text, match.start())
        line_start = text.rfind("\n", 0, match.start()) + 1
        indentation = text[line_start:match.start()] if start < match.start() else ""
        text = text[:start] + indentation + "".join(text_pieces) + text[body_end:]
        view = view[:start] + indentation + "".join(view_pieces) + view[body_end:]
    return text


_CONDITION_OPENS = ("#if", "#ifdef", "#ifndef")
_CONDITION_GOES_ON = ("#elif", "#else")


def _loop_pragmas_start(text: str, loop_start: int) -> int:
    """Where the pragmas that annotate the loop at ``loop_start`` begin (``loop_start`` when there are none).

    A loop pragma (``#pragma GCC ivdep``, ``#pragma clang loop ...``, often inside ``#if`` guards) must be
    followed by a loop: when the loop becomes a block, the directive lines right above it go with it, as long
    as they are pragmas and complete ``#if``/``#endif`` groups of pragmas, nothing else.
    """
    line_start = text.rfind("\n", 0, loop_start) + 1
    if text[line_start:loop_start].strip():
        return loop_start  # the loop does not start its line: no directive can annotate it
    start, depth, pragmas = loop_start, 0, False
    end = line_start
    while end > 0:
        begin = text.rfind("\n", 0, end - 1) + 1
        directive = text[begin:end - 1].strip()
        word = directive.split(maxsplit=1)[0] if directive else ""
        if word == "#pragma":
            pragmas = True
        elif word == "#endif":
            depth += 1
        elif word in _CONDITION_OPENS:
            if depth == 0:
                break
            depth -= 1
        elif word not in _CONDITION_GOES_ON or depth == 0:
            break
        end = begin
        if depth == 0 and pragmas:
            start = begin
    return start
