"""Terms that change nothing: ``* 1`` wherever it multiplies, ``+ 0`` and ``0 +`` inside subscripts.

Index expressions are generated from strides and offsets, and a stride of 1 or
an offset of 0 leaves ``* 1`` and ``+ 0`` behind.  ``x * 1`` is ``x`` for every
type (floats included); ``+ 0`` is dropped only in subscripts, whose arithmetic
is integer, because ``-0.0f + 0`` is ``+0.0f``.
"""

from __future__ import annotations

import bisect
import re

from deeploy_core.codegen.c_layout.code_view import code_view, replace_spans

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


def drop_identity_terms(text: str) -> str:
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
    text = replace_spans(text, cuts)
    names = [(m.start(), m.end(), f"[{m.group(1)}]") for m in _ONE_NAME_IN_PARENTHESES.finditer(code_view(text))]
    return replace_spans(text, names)
