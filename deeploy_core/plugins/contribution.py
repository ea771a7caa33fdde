"""One registration a plugin made: which plugin registered which extension.

Contributions are what the host collects while plugins register, what the
duplicate rule and the operator conflict report sort through, and what the
registry is built from.  They sit in a module of their own so that all of
those can name the type without importing each other (the registry refers to
the duplicates it was given, the duplicate rule to the contributions it sorts).
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.extensions import Extension
from deeploy_core.plugins.records import PluginRecord


@dataclass(frozen=True)
class Contribution:
    """One ``register(...)`` call made by a plugin."""

    record: PluginRecord
    extension: Extension
