"""The cluster's default core count and memory sizes, as plain numbers.

The registration declares its options with them (``cores``, ``l1``/``l2``/
``l3``) and must stay cheap to import, while the hierarchy and the platform
data that also use them import the core's heavier modules: so the numbers
live here, importing nothing.
"""

from __future__ import annotations

DEFAULT_CORES = 8
MAX_CORES = 16
"""The emulator's limit (PULP_MAX_CORES in pulp_hal.h)."""

DEFAULT_L1_BYTES = 64 * 1024
DEFAULT_L2_BYTES = 512 * 1024
DEFAULT_L3_BYTES = 8 * 1024 * 1024

LEVEL_SIZES: tuple[tuple[str, int | None], ...] = (("L3", DEFAULT_L3_BYTES), ("L2", DEFAULT_L2_BYTES),
                                                   ("L1", DEFAULT_L1_BYTES))
"""The levels, outermost first, with their default sizes in bytes."""
