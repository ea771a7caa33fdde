"""Memory sizes on the command line as people write them: ``64000``, ``64k``, ``64KiB``, ``1.5MiB``.

The docs speak of levels in KiB and people type ``64k``, which an integer
option refused (``'64k' is not a valid integer range``).  Decimal suffixes
count in thousands (``k``, ``kB``, ``M``, ``MB``), binary ones in 1024s
(``Ki``, ``KiB``, ``Mi``, ``MiB``); case is ignored except that ``b`` alone
would be bits, so only ``B`` is accepted for bytes.  A size must come out as
a whole, positive number of bytes.
"""

from __future__ import annotations

import re
from fractions import Fraction

import click

UNITS = {"": 1, "B": 1, "K": 1000, "KB": 1000, "KI": 1024, "KIB": 1024, "M": 1000**2, "MB": 1000**2,
         "MI": 1024**2, "MIB": 1024**2, "G": 1000**3, "GB": 1000**3, "GI": 1024**3, "GIB": 1024**3}
PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
HELP = "bytes: 64000, 64k (×1000) or 64KiB (×1024)"


def parse_byte_size(text: str) -> int:
    """``"64KiB"`` → 65536; a ValueError that says what is accepted otherwise."""
    match = PATTERN.match(text)
    unit = match.group(2) if match else ""
    if match is not None and unit.endswith("b") and unit[:-1].upper() + "B" in UNITS:
        raise ValueError(f"{text!r}: 'b' is bits; write {match.group(1)}{unit[:-1]}B for bytes ({HELP})")
    if match is None or unit.upper() not in UNITS:
        raise ValueError(f"{text!r} is not a size in bytes ({HELP})")
    size = Fraction(match.group(1)) * UNITS[unit.upper()]
    if size.denominator != 1 or size < 1:
        raise ValueError(f"{text!r} is not a whole, positive number of bytes ({HELP})")
    return int(size)


class ByteSize(click.ParamType):
    """A click option type for :func:`parse_byte_size`."""

    name = "bytes"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 1:
                self.fail(f"{value} is not a positive number of bytes", param, ctx)
            return value
        try:
            return parse_byte_size(str(value))
        except ValueError as error:
            self.fail(str(error), param, ctx)
