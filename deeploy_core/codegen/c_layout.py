"""The last pass over ``Network.c``: loops that run once become blocks, indentation follows the braces, long lines wrap.

Kernels and tile loops are emitted by many templates, each with its own idea of
indentation, and many of their loops have a trip count fixed at 1 for a given
layer (batch 1, one group, one tile).  Rewriting every template for layout would
touch hundreds of them; this pass works on the finished text instead, and only
where C's grammar makes the change meaning-preserving:

* ``for (T v = 0; v < 1; ++v) BODY`` runs BODY once with ``v`` equal to 0: it
  becomes the block ``{ const T v = 0; BODY }`` (the declaration only where
  BODY uses ``v``);
* a line's indentation is four spaces per open brace, plus eight for a line
  that continues a statement (inside parentheses, or after a line that ends
  neither a statement nor a block);
* a line longer than :data:`MAX_COLUMNS` breaks at a space outside string and
  character literals, first into one statement per line (a block's braces
  count as statements), then, for a statement still too long, preferring a
  break after a comma, then before an operator; a statement broken in two
  continues eight columns deeper; a comment broken in two is closed and
  reopened (every comment closes on its line); a preprocessor line continues
  with ``\\``;
* an ``#include`` repeated later in the file is dropped;
* ``* 1`` goes wherever it multiplies (``x * 1`` is ``x``, floats included), and
  ``+ 0`` / ``0 +`` and parentheses around one name go inside subscripts, whose
  arithmetic is integer (outside them ``-0.0f + 0`` is ``+0.0f``, so a float
  ``+ 0`` stays).

Comments, string and character literals and preprocessor lines are never
changed inside: every step reads a *code view* of the text, the same text with
each masked character replaced by a filler (newlines kept, so offsets and
lines match), and finds braces, keywords and identifiers there with ``str``
and ``re`` operations instead of walking characters in Python.  The pass runs
on every compile, so its cost is part of every test and every user's build.  The result is checked by
``tests/test_c_layout.py`` and compiled and run by every validating test.
"""

from __future__ import annotations

import bisect
import re

MAX_COLUMNS = 120
"""The longest line the pass leaves (the C writer's limit, issue 34)."""
INDENT = "    "
CONTINUATION = " " * 8

_ONCE_LOOP = re.compile(
    r"for\s*\(\s*(?P<type>(?:const\s+)?(?:int(?:8|16|32|64)_t|uint(?:8|16|32|64)_t|int|unsigned|long|size_t))\s+"
    r"(?P<var>[A-Za-z_]\w*)\s*=\s*0\s*;\s*(?P=var)\s*<\s*1\s*;\s*(?:\+\+\s*(?P=var)|(?P=var)\s*\+\+|(?P=var)\s*\+=\s*1)"
    r"\s*\)\s*")
_BREAK_OPERATORS = (" && ", " || ", " ? ", " : ", " + ", " - ", " * ", " / ", " = ", " << ", " >> ", " | ", " & ")


def tidy_c(text: str) -> str:
    """``text`` with once-loops unrolled, includes once, indentation by structure and lines of at most 120 columns."""
    text = _drop_repeated_includes(text)
    text = _unroll_once_loops(text)
    text = _drop_identity_terms(text)
    lines = _reindent(text.split("\n"))
    for _ in range(4):  # a wrapped line's continuation takes the indentation its structure gives it, once more
        wrapped = _wrap(lines)
        if wrapped == lines:
            break
        lines = _reindent(wrapped)
    return "\n".join(lines)


# -- the code view: what the rewrites must not touch ------------------------------------------------------


COMMENT_FILL = "\x01"
"""Stands for a character inside a block comment in the code view (a line may break there)."""
OTHER_FILL = "\x02"
"""Stands for a character of a literal, a ``//`` comment or a preprocessor line in the code view."""
_FILLS = COMMENT_FILL + OTHER_FILL
_BLANK_OR_FILL = " \t" + _FILLS

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


def _directive_view(line: str) -> str:
    """The code view of one preprocessor line: its comments and literals masked, the rest code."""
    return _MASKED_IN_DIRECTIVE.sub(_fill, line)


# -- includes ------------------------------------------------------------------------------------------------


def _drop_repeated_includes(text: str) -> str:
    seen: set[str] = set()
    kept = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("#include"):
            key = " ".join(stripped.split())
            if key in seen:
                continue
            seen.add(key)
        kept.append(line)
    return "\n".join(kept)


# -- loops that run once -------------------------------------------------------------------------------------


_BRACKET_PATTERNS = {"{": re.compile(r"[{}]"), "(": re.compile(r"[()]")}
_NESTING_OR_END = re.compile(r"[()\[\]{};]")
_CONTROL = re.compile(r"(for|while|if)\b\s*")
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
    """The index just after the statement starting at ``start`` (a block, a loop or if with its body, or up to ``;``)."""
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


def _unroll_once_loops(text: str) -> str:
    """Every ``for (T v = 0; v < 1; ++v) BODY`` outside comments and literals becomes ``{ const T v = 0; BODY }``.

    The loops are found in the code view, so a loop quoted in a comment is never matched, and rewritten last
    first, so that an earlier loop's position still holds; the view is kept in step with the text (an inserted
    declaration is code) instead of recomputed.
    """
    view = code_view(text)
    found = [match for match in _ONCE_LOOP.finditer(view)
             if match.start() == 0 or not (view[match.start() - 1].isalnum() or view[match.start() - 1] == "_")]
    for match in reversed(found):
        body_start = match.end()
        body_end = _statement_end(view, body_start)
        variable, c_type = match.group("var"), match.group("type").replace("const ", "")
        used = re.search(rf"\b{re.escape(variable)}\b", view[body_start:body_end]) is not None
        declaration = f"const {c_type} {variable} = 0; " if used else ""
        body, body_view = text[body_start:body_end], view[body_start:body_end]
        if body_view.lstrip().startswith("{"):
            offset = body_view.index("{") + 1
            rest = len(body) - len(body[offset:].lstrip(" "))
            opening = body[:offset] + " " + declaration
            text_pieces = [opening, body[rest:]]
            view_pieces = [opening, body_view[rest:]]
        elif declaration:
            text_pieces = ["{ " + declaration, body, " }"]
            view_pieces = ["{ " + declaration, body_view, " }"]
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


# -- identity terms ------------------------------------------------------------------------------------------


_TIMES_ONE = re.compile(r" \* 1(?![\w.])")
"""``* 1`` after an operand, ``1`` a whole literal (not ``10``, ``1.5f``, ``1u``): multiplication binds tightest of
the binary operators and is left-associative, so ``(a ... * b) * 1`` is always ``a ... * b``."""
_PLUS_ZERO = re.compile(r" \+ 0(?= *[)\]+\-,;])")
"""``+ 0`` ending an additive term (what follows binds no tighter than ``+``: never ``+ 0 * c``)."""
_ZERO_PLUS = re.compile(r"\[0 \+ (?=[\w(])")
_ONE_NAME_IN_PARENTHESES = re.compile(r"\[\((\w+)\)\]")


def _subscript_spans(view: str) -> list[tuple[int, int]]:
    """The spans of code inside square brackets, outermost (nested subscripts lie inside them)."""
    spans, depth, start = [], 0, 0
    for match in re.finditer(r"[\[\]]", view):
        if match.group(0) == "[":
            if depth == 0:
                start = match.end()
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((start, match.start()))
    return spans


def _after_operand(view: str, position: int) -> bool:
    """Whether the code just before ``position`` ends an operand (a name, a literal, ``)`` or ``]``)."""
    return position > 0 and (view[position - 1].isalnum() or view[position - 1] in "_)]")


def _drop_identity_terms(text: str) -> str:
    """``text`` without ``* 1`` and, in subscripts, without ``+ 0``, ``0 +`` and then ``(name)`` parentheses.

    The patterns start with a fixed string (fast to search for); what must precede them is checked here.
    """
    view = code_view(text)
    cuts = [(m.start(), m.end(), "") for m in _TIMES_ONE.finditer(view) if _after_operand(view, m.start())]
    cuts += [(m.start() + 1, m.end(), "") for m in _ZERO_PLUS.finditer(view)]
    spans = _subscript_spans(view)
    starts = [start for start, _ in spans]
    for match in _PLUS_ZERO.finditer(view):
        index = bisect.bisect_right(starts, match.start()) - 1
        if index >= 0 and match.end() <= spans[index][1] and _after_operand(view, match.start()):
            cuts.append((match.start(), match.end(), ""))
    text = _rewrite(text, cuts)
    names = [(m.start(), m.end(), f"[{m.group(1)}]") for m in _ONE_NAME_IN_PARENTHESES.finditer(code_view(text))]
    return _rewrite(text, names)


def _rewrite(text: str, cuts: list[tuple[int, int, str]]) -> str:
    """``text`` with each span ``(start, end)`` replaced by its string (spans do not overlap)."""
    pieces, previous = [], 0
    for start, end, replacement in sorted(cuts):
        pieces += [text[previous:start], replacement]
        previous = end
    return "".join(pieces) + text[previous:]


# -- indentation ---------------------------------------------------------------------------------------------


_CONTROL_LINE = re.compile(r"(for|while|if|else)\b")


_BRACES = re.compile(r"[{}]")


def _reindent(lines: list[str]) -> list[str]:
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
        starts_masked = view[lead] in _FILLS
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
            before = view[:brace.start()].rstrip(_BLANK_OR_FILL)[-1:] or previous_code
            braces.append(before in "=," or (before == "{" and bool(braces) and braces[-1]))
        parens += view.count("(") + view.count("[") - view.count(")") - view.count("]")
        last = view.strip(_BLANK_OR_FILL)  # first and last characters of code (what lies between does not matter)
        if last:
            previous_code = last[-1]
            listing = bool(braces) and braces[-1]
            continues = last[-1] not in ";{}:" and not (last[-1] == "," and listing)
            control = parens == 0 and _CONTROL_LINE.match(last) is not None and last[-1] in ")e"
    return result


# -- long lines ----------------------------------------------------------------------------------------------


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
        if mark == "{" and view[:match.start()].rstrip(" " + _FILLS)[-1:] in ("=", ",", "("):
            continue
        if mark == "}" and _GOES_ON.match(view, after) is not None:
            continue
        starts.append(after)
    return starts


def _one_statement_per_line(line: str, view: str) -> list[tuple[str, str]]:
    """``line`` split so that each statement (or block brace) starts a line of its own; views split alike."""
    base = len(line) - len(line.lstrip())
    pieces, previous = [], 0
    for start in [*_statement_starts(line, view, base), len(line)]:
        text, text_view = line[previous:start].strip(" "), view[previous:start].strip(" ")
        if text:
            pieces.append((" " * base + text, " " * base + text_view))
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


def _wrap(lines: list[str]) -> list[str]:
    views = code_view("\n".join(lines)).split("\n")
    result = []
    for line, view in zip(lines, views):
        if len(line) <= MAX_COLUMNS:
            result.append(line)
            continue
        preprocessor = line.lstrip().startswith("#")
        if preprocessor:
            view = _directive_view(line)
        if not preprocessor and len(pieces := _one_statement_per_line(line, view)) > 1:
            result.extend(piece for piece, _ in pieces)  # indented by the next _reindent, then wrapped if need be
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
