"""Noticing plugins that are slow to load.

Every ``deeploy-core`` command imports every allowed plugin before it does
anything else, so one plugin that imports a heavy dependency at module level
(or does real work in a registry hook) slows down every command, including
``deeploy-core plugins``.  Users cannot tell which plugin is at fault from the
delay alone, so the host times each plugin and names the ones that take longer
than a threshold; the threshold is a setting because what counts as slow
depends on the machine (a loaded CI runner, a network file system).
"""

from __future__ import annotations

import math
from typing import Mapping

from deeploy_core.errors import DeeployError
from deeploy_core.plugins.records import PluginRecord

SLOW_PLUGIN_VARIABLE = "DEEPLOY_CORE_SLOW_PLUGIN_SECONDS"
DEFAULT_SLOW_PLUGIN_SECONDS = 1.0
"""Loading a plugin (import plus registry hooks) for longer than this prints a warning."""


def slow_plugin_threshold(environ: Mapping[str, str]) -> float:
    """The threshold in seconds from ``environ`` (``inf`` switches the warning off).

    A value that is not a non-negative number is refused rather than ignored:
    a typo would otherwise silently keep the default.
    """
    raw = environ.get(SLOW_PLUGIN_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_SLOW_PLUGIN_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if math.isnan(seconds) or seconds < 0:
        raise DeeployError(f"{SLOW_PLUGIN_VARIABLE}={raw!r}: expected a number of seconds >= 0 (or 'inf')")
    return seconds


def slow_plugin_warning(record: PluginRecord, threshold: float) -> str:
    """The one-line warning for a plugin that took longer than ``threshold`` to load."""
    return (
        f"warning: plugin {record.label} took {record.load_seconds:.2f} s to load (threshold {threshold:g} s, "
        f"set by {SLOW_PLUGIN_VARIABLE}); every command pays this, --disable-plugin {record.name} skips it"
    )
