"""Parsing ``--input-shape name=1x3x32x32`` options."""

from __future__ import annotations

import shlex

from deeploy_core.errors import DeeployError


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``"x=1x3x32x32"`` → ``("x", (1, 3, 32, 32))``; ``"x="`` is a scalar."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise DeeployError(f"--input-shape {text!r}: expected NAME=D1xD2x…")
    try:
        shape = tuple(int(dim) for dim in dims.split("x")) if dims else ()
    except ValueError:
        raise DeeployError(f"--input-shape {text!r}: dimensions must be integers separated by 'x'") from None
    if any(dim <= 0 for dim in shape):
        raise DeeployError(f"--input-shape {text!r}: dimensions must be positive")
    return name, shape


def input_shape_hint(name: str, dims: list[int | str] | None = None) -> str:
    """The option that fixes input ``name``, the name quoted for a POSIX shell (``repr`` when not printable).

    With ``dims`` (known sizes, and the names of the dynamic ones) the option
    is written out in full, ready to copy once each named size is replaced:
    ``--input-shape x=1xLENGTHx4 (LENGTH: its size)``.  A dynamic first
    dimension is the batch, which a microcontroller runs at 1.
    """
    if dims is None:
        quoted = repr(name) if not name.isprintable() else shlex.quote(name)
        return f"--input-shape {quoted}=D1xD2…"
    parts = [str(dim) if isinstance(dim, int) else "1" if index == 0 else _placeholder(dim, index)
             for index, dim in enumerate(dims)]
    named = [part for part, dim in zip(parts, dims) if not isinstance(dim, int) and part != "1"]
    option = f"{name}={'x'.join(parts)}"
    text = f"--input-shape {option!r}" if not name.isprintable() else f"--input-shape {shlex.quote(option)}"
    return f"{text} ({', '.join(named)}: {'its size' if len(named) == 1 else 'their sizes'})" if named else text


def _placeholder(dim: str, index: int) -> str:
    """A dynamic dimension's name as a placeholder a shell leaves alone (``unk__267`` → ``UNK__267``)."""
    cleaned = "".join(ch for ch in dim.upper() if ch.isascii() and (ch.isalnum() or ch == "_"))
    return cleaned if cleaned and not cleaned[0].isdigit() else f"D{index + 1}"
