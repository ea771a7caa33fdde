"""CMSIS-NN as the user's library: where the build finds it and which of its files each kernel needs.

Nothing of CMSIS-NN is copied into this project or an output folder.  A
kernel names the CMSIS-NN sources its entry function reaches (checked against
a real copy by the plugin's tests); the folder's build compiles exactly those
from ``$(CMSIS_NN_PATH)``.
"""

from __future__ import annotations

from deeploy_core.plugin_api import ExternalLibrary

from deeploy_cortex_m.names import CMSIS_NN_URL, CMSIS_NN_VARIABLE

MARKER = "Include/arm_nnfunctions.h"
"""A file every CMSIS-NN release has: how a build tells a wrong path from a right one."""


def cmsis_nn(sources: tuple[str, ...] = (), default_root: str = "",
             defines: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> ExternalLibrary:
    """CMSIS-NN with ``sources`` (relative to its root); ``default_root`` is the compile option's path, if any."""
    return ExternalLibrary(variable=CMSIS_NN_VARIABLE, marker=MARKER, where=CMSIS_NN_URL, include_dirs=("Include",),
                           sources=sources, defines=defines, default_root=default_root)
