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
  character literals, preferring after a comma, then before an operator, and
  continues eight columns deeper; a comment broken in two is closed and
  reopened (every comment closes on its line); a preprocessor line continues
  with ``\\``;
* an ``#include`` repeated later in the file is dropped.

Comments, string and character literals and preprocessor lines are never
changed inside (they are masked before any rewrite).  The result is checked by
``tests/test_c_layout.py`` and compiled and run by every validating test.
"""

from __future__ import annotations

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
    lines = _reindent(text.split("\n"))
    for _ in range(4):  # a wrapped line's continuation takes the indentation its structure gives it, once more
        wrapped = _wrap(lines)
        if wrapped == lines:
            break
        lines = _reindent(wrapped)
    return "\n".join(lines)


# -- masking: what the rewrites must not touch ---------------------------------------------------------------


CODE, BLOCK_COMMENT, OTHER = 0, 1, 2
"""Kinds of characters: code, inside a block comment (a line may break there), anything else masked."""


def code_mask(text: str) -> list[bool]:
    """Per character of ``text``: True inside a comment, a string or character literal, or a preprocessor line."""
    return [kind != CODE for kind in char_kinds(text)]


_MASKED = re.compile(
    r"/\*.*?(?:\*/|\Z)"                      # a block comment (to the end of the text if it never closes)
    r"|//[^\n]*"                              # a line comment
    r"|\"(?:\\.|[^\"\\\n])*\"?"                  # a string literal
    r"|'(?:\\.|[^'\\\n])*'?"                    # a character literal
    r"|^[ \t]*\#(?:[^\n]*\\\n)*[^\n]*",          # a preprocessor line with its continuations
    re.S | re.M)


def char_kinds(text: str) -> list[int]:
    """Per character of ``text``: :data:`CODE`, :data:`BLOCK_COMMENT`, or :data:`OTHER` (literal, ``//`` comment,
    preprocessor line)."""
    kinds = [CODE] * len(text)
    for match in _MASKED.finditer(text):
        start, end = match.span()
        kind = BLOCK_COMMENT if text.startswith("/*", start) else OTHER
        kinds[start:end] = [kind] * (end - start)
    return kinds


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


def _matching(text: str, mask: list[bool], start: int, opening: str, closing: str) -> int:
    """The index of the bracket closing the one at ``start``."""
    depth = 0
    for index in range(start, len(text)):
        if mask[index]:
            continue
        if text[index] == opening:
            depth += 1
        elif text[index] == closing:
            depth -= 1
            if depth == 0:
                return index
    raise ValueError(f"unbalanced {opening!r} in generated C")


def _statement_end(text: str, mask: list[bool], start: int) -> int:
    """The index just after the statement starting at ``start`` (a block, a loop or if with its body, or up to ``;``)."""
    index = start
    while text[index].isspace():
        index += 1
    if text[index] == "{":
        return _matching(text, mask, index, "{", "}") + 1
    keyword = re.match(r"(for|while|if)\b\s*", text[index:])
    if keyword is not None:
        header_end = _matching(text, mask, index + keyword.end(), "(", ")") + 1
        end = _statement_end(text, mask, header_end)
        if keyword.group(1) == "if":
            rest = re.match(r"\s*else\b", text[end:])
            if rest is not None:
                end = _statement_end(text, mask, end + rest.end())
        return end
    depth = 0
    for position in range(index, len(text)):
        if mask[position]:
            continue
        char = text[position]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ";" and depth == 0:
            return position + 1
    raise ValueError("a statement without ';' in generated C")


def _uses(text: str, mask: list[bool], start: int, end: int, name: str) -> bool:
    """Whether identifier ``name`` appears in code (not in a comment or literal) between ``start`` and ``end``."""
    return any(not mask[start + match.start()] for match in re.finditer(rf"\b{re.escape(name)}\b", text[start:end]))


def _unroll_once_loops(text: str) -> str:
    """Every ``for (T v = 0; v < 1; ++v) BODY`` outside comments and literals becomes ``{ const T v = 0; BODY }``.

    The loops are rewritten last first, so that an earlier loop's position still holds, with the mask kept in
    step with the text (an inserted declaration is code) instead of recomputed: one pass over a large file.
    """
    mask = code_mask(text)
    found = [match for match in _ONCE_LOOP.finditer(text) if not mask[match.start()]
             and (match.start() == 0 or not (text[match.start() - 1].isalnum() or text[match.start() - 1] == "_"))]
    for match in reversed(found):
        body_start = match.end()
        body_end = _statement_end(text, mask, body_start)
        variable, c_type = match.group("var"), match.group("type").replace("const ", "")
        declaration = f"const {c_type} {variable} = 0; " if _uses(text, mask, body_start, body_end, variable) else ""
        body, body_mask = text[body_start:body_end], mask[body_start:body_end]
        if body.lstrip().startswith("{"):
            offset = body.index("{") + 1
            rest = len(body) - len(body[offset:].lstrip(" "))
            pieces = [(body[:offset] + " " + declaration, None), (body[rest:], body_mask[rest:])]
        elif declaration:
            pieces = [("{ " + declaration, None), (body, body_mask), (" }", None)]
        else:
            pieces = [(body, body_mask)]
        replacement = "".join(piece for piece, _ in pieces)
        replacement_mask = [flag for piece, flags in pieces for flag in (flags if flags is not None else
                                                                         [False] * len(piece))]
        text = text[:match.start()] + replacement + text[body_end:]
        mask = mask[:match.start()] + replacement_mask + mask[body_end:]
    return text


# -- indentation ---------------------------------------------------------------------------------------------


def _line_masks(lines: list[str]) -> list[list[bool]]:
    mask = code_mask("\n".join(lines))
    masks, position = [], 0
    for line in lines:
        masks.append(mask[position:position + len(line)])
        position += len(line) + 1
    return masks


def _reindent(lines: list[str]) -> list[str]:
    """Four spaces per open brace; eight more for a line continuing a statement; comments inside blocks follow."""
    masks = _line_masks(lines)
    result = []
    depth = parens = 0
    continues = control = False
    for line, mask in zip(lines, masks):
        stripped = line.lstrip()
        lead = len(line) - len(stripped)
        if not stripped:
            result.append("")
            continue
        starts_masked = mask[lead] if lead < len(mask) else False
        if starts_masked and not stripped.startswith(("/*", "//", "#")):  # inside a comment or literal from above
            result.append(line.rstrip())
            continue
        if stripped.startswith("#"):
            result.append(stripped.rstrip())
            continue
        closing = len(stripped) - len(stripped.lstrip("}"))
        level = max(depth - closing, 0)
        extra = ""
        if (parens > 0 or continues) and not stripped.startswith(("/*", "}")):
            extra = INDENT if control else CONTINUATION  # the body of a brace-less for/if/while is one level in
        result.append(INDENT * level + extra + stripped.rstrip())
        code = [char for char, masked in zip(line, mask) if not masked]
        depth += code.count("{") - code.count("}")
        parens += code.count("(") + code.count("[") - code.count(")") - code.count("]")
        last = "".join(code).strip()
        if last:
            continues = last[-1] not in ";{},:"
            control = parens == 0 and bool(re.match(r"(for|while|if|else)\b", last)) and last[-1] in ")e"
    return result


# -- long lines ----------------------------------------------------------------------------------------------


def _break_at(line: str, kinds: list[int], floor: int) -> int | None:
    """Where to break ``line`` (the index the next line starts at), or None when no space qualifies.

    Only a space in code or inside a block comment qualifies (a comment simply continues on the next line);
    never one in a literal or a ``//`` comment.
    """
    limit = min(MAX_COLUMNS, len(line) - 1)

    def free(position: int) -> bool:
        if line[position - 1] != " " or kinds[position - 1] == OTHER:
            return False
        return kinds[position - 1] != BLOCK_COMMENT or position <= MAX_COLUMNS - 3  # room to close the comment

    candidates = [position for position in range(limit, floor, -1) if free(position)]
    for position in candidates:
        if line[position - 2] == ",":
            return position
    for position in candidates:
        if any(line.startswith(op, position - 1) for op in _BREAK_OPERATORS):
            return position
    return candidates[0] if candidates else None


def _wrap(lines: list[str]) -> list[str]:
    text = "\n".join(lines)
    all_kinds = char_kinds(text)
    result, position = [], 0
    for line in lines:
        kinds = all_kinds[position:position + len(line)]
        position += len(line) + 1
        preprocessor = line.lstrip().startswith("#")
        if preprocessor:
            kinds = [CODE] * len(line)
        base = len(line) - len(line.lstrip())
        while len(line) > MAX_COLUMNS:
            cut = _break_at(line, kinds, base + 8)
            if cut is None:
                break
            # A comment broken in two is closed and reopened, so that every comment closes on its own line
            # (what tests/test_security.py checks: no text of the model can reach the next line's code).
            in_comment = kinds[cut - 1] == BLOCK_COMMENT and not preprocessor
            result.append(line[:cut].rstrip() + (" \\" if preprocessor else " */" if in_comment else ""))
            rest = line[cut:].lstrip(" ")
            prefix = " " * (base + (0 if preprocessor else 8)) + ("/* " if in_comment else "")
            kinds = [BLOCK_COMMENT if in_comment else CODE] * len(prefix) + kinds[len(line) - len(rest):]
            line = prefix + rest
        result.append(line)
    return result
