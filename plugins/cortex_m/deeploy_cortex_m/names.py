"""The names this plugin registers and the build variable it reads; importing it costs nothing."""

from __future__ import annotations

CORTEX_M4 = "cortex-m4"
CORTEX_M7 = "cortex-m7"
CORTEX_M33 = "cortex-m33"
CORTEX_M55 = "cortex-m55"
FALLBACK_PLATFORM = "generic-c"
"""The installed platform whose kernels run every layer CMSIS-NN has no kernel for."""
CMSIS_NN_VARIABLE = "CMSIS_NN_PATH"
"""The build variable (and environment variable) naming the user's CMSIS-NN folder."""
CMSIS_NN_URL = "https://github.com/ARM-software/CMSIS-NN"
