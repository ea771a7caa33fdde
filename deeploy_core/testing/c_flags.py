"""The C compiler flags the peer-network tests hold generated code and runtimes to.

The platforms' peer-network tests build every network with the warning
flags, so a template or runtime change that introduces a warning fails the
suite on the platform it touches, at no extra build cost.  Sanitizers make a build several
times slower, so each platform runs them on one configuration of the peers
only (the sanitizer is what differs; the generated code paths are the same).
Both live here so that every test file asks for the same strictness.
"""

from __future__ import annotations

WARNING_FLAGS: tuple[str, ...] = ("-Wall", "-Wextra", "-Werror", "-pedantic")
"""Warnings are errors; ``-pedantic`` keeps the code inside the C99 the runtimes declare (``-std=c99``)."""

ADDRESS_SANITIZER_FLAGS: tuple[str, ...] = ("-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all")
"""AddressSanitizer and UBSan; ``-fno-sanitize-recover`` turns every UBSan report into a failing exit code."""

THREAD_SANITIZER_FLAGS: tuple[str, ...] = ("-g", "-fsanitize=thread")
"""ThreadSanitizer, for platforms whose generated code runs on several threads (cluster emulators)."""


def strict_flags(sanitizer: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The warning flags followed by ``sanitizer`` (one of the sanitizer tuples above, or none)."""
    return WARNING_FLAGS + sanitizer
