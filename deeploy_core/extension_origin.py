"""Which plugin registered an extension.

Kept apart from :mod:`deeploy_core.extensions` (the descriptors, which know
the front end's and the tiler's types) because the lowest layers name an
extension's origin in their messages: an allocator's refusal says which
plugin's allocator refused.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExtensionOrigin:
    """Which plugin registered an extension (for listings and error messages)."""

    plugin: str
    distribution: str
    version: str = ""

    def __str__(self) -> str:
        label = f"{self.distribution} {self.version}".strip()
        return f"{self.plugin} ({label})"
