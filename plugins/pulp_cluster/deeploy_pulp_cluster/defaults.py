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
DEFAULT_L3_BYTES = 64 * 1024 * 1024
"""64 MiB: the off-chip RAM of PULP-class boards (HyperRAM / OctaSPI PSRAM parts of 8-64 MiB; GAP8/GAP9 and
Siracusa boards carry 8-64 MiB).  Tensors that do not fit L2 live here, and the weights of a float ResNet-18
(11.7 M parameters, 46.8 MB) must fit it whole: 8 MiB, the size of the smallest such parts, held no ImageNet CNN."""

L3_BUFFERINGS = ("single", "double")
DEFAULT_L3_BUFFERING = "single"
"""Staging buffers in L2 per streamed tensor that lives in L3: like ``--buffering`` for the L2 <-> L1 hop, single
unless asked; double keeps the next tile's L3 transfer in flight while the current tile computes, for twice the
staging bytes in L2."""

LEVEL_SIZES: tuple[tuple[str, int | None], ...] = (("L3", DEFAULT_L3_BYTES), ("L2", DEFAULT_L2_BYTES),
                                                   ("L1", DEFAULT_L1_BYTES))
"""The levels, outermost first, with their default sizes in bytes."""
