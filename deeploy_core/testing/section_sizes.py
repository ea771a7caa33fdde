"""Flash and RAM a built library takes, by kind of section, read with GNU ``size -A``.

Berkeley-format ``size`` folds read-only data into ``text``; for a network
whose weights are ``const`` arrays that hides the number a firmware engineer
cares about (weights in flash versus code), so the System V listing is read
instead and every section is sorted into code, read-only data, initialised
data and zero-initialised data by its name.  The compilers put small objects
in ``.sdata``/``.sbss``/``.srodata`` on RISC-V and string literals in
``.rodata.str1.*``, hence prefixes rather than exact names.  Sections that
never reach the target's memory (debug information, notes, attributes,
comments) are left out.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("text", (".text",)),
    ("rodata", (".rodata", ".srodata")),
    ("data", (".data", ".sdata")),
    ("bss", (".bss", ".sbss", "COMMON")),
)


@dataclass(frozen=True)
class SectionSizes:
    """Bytes of code, read-only data, initialised data and zero-initialised data."""

    text: int = 0
    rodata: int = 0
    data: int = 0
    bss: int = 0

    def __add__(self, other: SectionSizes) -> SectionSizes:
        return SectionSizes(self.text + other.text, self.rodata + other.rodata, self.data + other.data,
                            self.bss + other.bss)


def _kind(section: str) -> str | None:
    for kind, prefixes in _KINDS:
        if any(section == prefix or section.startswith(prefix + ".") for prefix in prefixes):
            return kind
    return None


def parse_size_listing(listing: str) -> SectionSizes:
    """Sum the sections of a ``size -A`` listing (one block per archive member) by kind."""
    totals = {kind: 0 for kind, _ in _KINDS}
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) != 3 or not fields[1].isdigit():
            continue
        kind = _kind(fields[0])
        if kind is not None:
            totals[kind] += int(fields[1])
    return SectionSizes(**totals)


def parse_member_listing(listing: str) -> dict[str, SectionSizes]:
    """A ``size -A`` listing split by member: ``{object name: its sections}`` (one entry for a lone object)."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in listing.splitlines():
        if line.rstrip().endswith(":") and not line[:1].isspace():
            current = blocks.setdefault(line.split()[0].rstrip(":"), [])
        elif current is not None:
            current.append(line)
    return {name: parse_size_listing("\n".join(lines)) for name, lines in blocks.items()}


def measure_members(size_tool: str, library: Path) -> dict[str, SectionSizes]:
    """The section sizes of every object in ``library`` (a static archive or one object), by object name."""
    result = subprocess.run([size_tool, "-A", "-d", str(library)], capture_output=True, text=True, check=True)
    return parse_member_listing(result.stdout)


def measure(size_tool: str, library: Path) -> SectionSizes:
    """The section sizes of ``library`` (an object or a static archive) summed over its members."""
    result = subprocess.run([size_tool, "-A", "-d", str(library)], capture_output=True, text=True, check=True)
    return parse_size_listing(result.stdout)
