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
and ``re`` operations instead of walking characters in Python
(:mod:`.code_view`): the pass runs on every compile, so its cost is part of
every test and every user's build.  One module per rewrite; the result is
checked by ``tests/test_c_layout.py`` and compiled and run by every validating
test.
"""

from __future__ import annotations

from deeploy_core.codegen.c_layout.identity_terms import drop_identity_terms
from deeploy_core.codegen.c_layout.indentation import reindent
from deeploy_core.codegen.c_layout.line_wrap import MAX_COLUMNS, wrap
from deeploy_core.codegen.c_layout.once_loops import unroll_once_loops

__all__ = ["MAX_COLUMNS", "tidy_c"]


def tidy_c(text: str) -> str:
    """``text`` with once-loops unrolled, includes once, indentation by structure and lines of at most 120 columns."""
    text = _drop_repeated_includes(text)
    text = unroll_once_loops(text)
    text = drop_identity_terms(text)
    lines = reindent(text.split("\n"))
    for _ in range(4):  # a wrapped line's continuation takes the indentation its structure gives it, once more
        wrapped = wrap(lines)
        if wrapped == lines:
            break
        lines = reindent(wrapped)
    return "\n".join(lines)


def _drop_repeated_includes(text: str) -> str:
    """``text`` with each ``#include`` kept where it first appears (kernels' templates repeat ``<stdint.h>``)."""
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
