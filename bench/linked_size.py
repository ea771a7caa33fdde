"""What of a built ``libnetwork.a`` a firmware link keeps: its sections after ``--gc-sections``.

Summing every member of the archive (:func:`~deeploy_core.testing.section_sizes.measure_members`) counts
kernels that sit in a linked file but that the network never calls.  A firmware image linked with
``-Wl,--gc-sections`` holds only what is reachable from the functions the application calls, and the
output folder compiles with ``-ffunction-sections -fdata-sections`` so that the linker can drop the rest.
This module measures exactly that, without a ``main`` or a C library: a relocatable link
(``CC -r -nostdlib -Wl,--gc-sections``) of the whole archive whose roots are the global symbols the
generated objects define (``InitNetwork``, ``RunNetwork``, the input/output tables, with any ``--prefix``),
read with ``size -A``.  C library functions the kernels call (``expf``, ``memcpy``) stay undefined and are
not counted; neither is the application's own code.

Only ``bench/code_size.py`` measures this, so the module sits beside it, not in the installed
:mod:`deeploy_core.testing`.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from deeploy_core.testing.section_sizes import SectionSizes, parse_size_listing


@dataclass(frozen=True)
class LinkedSizes:
    """The kept sections of a library, with the code split into the generated network's and the kernels'."""

    total: SectionSizes
    network_text: int

    @property
    def kernels_text(self) -> int:
        return self.total.text - self.network_text


def _run(command: list[str]) -> str:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:3])} … failed: {(result.stderr or result.stdout).strip()[:500]}")
    return result.stdout


def _symbols(nm: str, archive: Path, members: set[str]) -> tuple[set[str], set[str]]:
    """(global defined symbols, functions defined) of the archive members named in ``members``."""
    roots: set[str] = set()
    functions: set[str] = set()
    member = ""
    for line in _run([nm, "--defined-only", str(archive)]).splitlines():
        if line.endswith(":") and " " not in line.strip():
            member = line.strip().rstrip(":")
            continue
        fields = line.split()
        if len(fields) != 3 or member not in members:
            continue
        kind, name = fields[1], fields[2]
        if kind.isupper():
            roots.add(name)
        if kind in "Tt":
            functions.add(name)
    return roots, functions


def linked_sizes(archive: Path, generated_members: set[str], tool_prefix: str = "") -> LinkedSizes:
    """The sections of ``archive`` (``libnetwork.a``) that a ``--gc-sections`` link rooted at the generated
    objects' global symbols keeps; ``generated_members``: the archive member names of the generated sources
    (``Network.o``, ``Network_weights.o``); ``tool_prefix``: e.g. ``arm-none-eabi-`` (empty: the host tools)."""
    roots, network_functions = _symbols(f"{tool_prefix}nm", archive, generated_members)
    with tempfile.TemporaryDirectory(prefix="linked_size_") as scratch:
        kept = Path(scratch) / "kept.o"
        _run([f"{tool_prefix}gcc", "-r", "-nostdlib", "-Wl,--gc-sections",
              *(f"-Wl,--undefined={name}" for name in sorted(roots)),
              "-Wl,--whole-archive", str(archive), "-Wl,--no-whole-archive", "-o", str(kept)])
        listing = _run([f"{tool_prefix}size", "-A", "-d", str(kept)])
    network_text = 0
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1].isdigit() and fields[0].startswith(".text."):
            if fields[0].removeprefix(".text.") in network_functions:
                network_text += int(fields[1])
    return LinkedSizes(parse_size_listing(listing), network_text)
