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


def input_shape_hint(name: str) -> str:
    """The option that fixes input ``name``, the name quoted for a POSIX shell (``repr`` when not printable)."""
    if not name.isprintable():
        return f"--input-shape {name!r}=D1xD2…"
    return f"--input-shape {shlex.quote(name)}=D1xD2…"
