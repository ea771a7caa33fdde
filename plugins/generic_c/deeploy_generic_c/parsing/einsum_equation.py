"""An Einsum equation with its operands' static shapes, reduced to index letters with one size each.

Why expand the ellipsis here: the shapes are constants of the layer, so
``...`` always stands for a known number of axes; giving each of them a
letter of its own (aligned from the right across operands and broadcast, as
numpy does) leaves one kind of equation, plain letters, for the kernel.  An
implicit output (no ``->``) is the ellipsis axes followed by the letters used
exactly once, in alphabetical order.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

ELLIPSIS = "..."


class EquationError(ValueError):
    """The equation does not fit the operands (the message says why, in one line)."""


@dataclass(frozen=True)
class Contraction:
    """Every operand's letters (one per axis, repeated for a diagonal), the output's, and each letter's size."""

    operands: tuple[str, ...]
    output: str
    sizes: dict[str, int]

    @property
    def summed(self) -> str:
        """Letters summed over (in order of first use)."""
        seen = []
        for letter in "".join(self.operands):
            if letter not in self.output and letter not in seen:
                seen.append(letter)
        return "".join(seen)


def _split_term(term: str, what: str) -> tuple[str, str, bool]:
    """(letters before ``...``, letters after, whether there is one) of one term."""
    if term.count(ELLIPSIS) > 1:
        raise EquationError(f"{what} {term!r} has more than one ellipsis")
    before, found, after = term.partition(ELLIPSIS)
    for letter in before + after:
        if letter not in string.ascii_letters:
            raise EquationError(f"{what} {term!r} has {letter!r}, which is not a letter or '...'")
    return before, after, bool(found)


def parse(equation: str, shapes: list[tuple[int, ...]]) -> Contraction:
    """The contraction ``equation`` describes for operands of ``shapes`` (spaces are ignored)."""
    text = equation.replace(" ", "")
    inputs_text, arrow, output_text = text.partition("->")
    terms = inputs_text.split(",")
    if len(terms) != len(shapes):
        raise EquationError(f"the equation has {len(terms)} operand terms for {len(shapes)} inputs")
    fresh = [letter for letter in string.ascii_letters if letter not in text]
    broadcast: list[int] = []  # the ellipsis axes' sizes, aligned from the right
    expanded: list[tuple[str, str, int]] = []
    for position, (term, shape) in enumerate(zip(terms, shapes)):
        before, after, has_ellipsis = _split_term(term, f"operand {position}")
        hidden = len(shape) - len(before) - len(after)
        if hidden < 0 or (hidden > 0 and not has_ellipsis):
            raise EquationError(f"operand {position} has rank {len(shape)}, the term {term!r} names "
                                f"{len(before) + len(after)} axes")
        if hidden > len(fresh):
            raise EquationError(f"the ellipsis of operand {position} covers more axes than letters are left")
        spanned = shape[len(before):len(before) + hidden]
        while len(broadcast) < hidden:
            broadcast.insert(0, 1)
        for offset, size in enumerate(spanned):
            slot = len(broadcast) - hidden + offset
            if broadcast[slot] not in (1, size) and size != 1:
                raise EquationError(f"the ellipsis axes of operand {position} ({list(spanned)}) do not broadcast")
            broadcast[slot] = max(broadcast[slot], size)
        expanded.append((before, after, hidden))
    ellipsis_letters = "".join(fresh[:len(broadcast)])
    operands = tuple(before + ellipsis_letters[len(broadcast) - hidden:] + after for before, after, hidden in expanded)
    if arrow:
        before, after, has_ellipsis = _split_term(output_text, "the output")
        output = before + (ellipsis_letters if has_ellipsis else "") + after  # without one, they are summed
    else:
        counts = {letter: "".join(terms).count(letter) for letter in set("".join(terms)) if letter != "."}
        output = ellipsis_letters + "".join(sorted(letter for letter, count in counts.items() if count == 1))
    if len(set(output)) != len(output):
        raise EquationError(f"the output {output_text!r} repeats a letter")
    used = set("".join(operands))
    for letter in output:
        if letter not in used:
            raise EquationError(f"the output letter {letter!r} is not in any operand")
    sizes: dict[str, int] = {}
    for position, (letters, shape) in enumerate(zip(operands, shapes)):
        for letter, size in zip(letters, shape):
            known = sizes.get(letter, 1)
            if size != known and 1 not in (size, known):
                raise EquationError(f"letter {letter!r} has size {known} and {size} (operand {position})")
            sizes[letter] = max(known, size)
    return Contraction(operands, output, sizes)
