"""The convolution family: every numeric variant of Conv, ConvTranspose and Deeploy's RequantizedConv.

``integer`` holds the raw-integer and requantised kernels, ``float32`` the float ones.  For ``Conv`` the integer
mapper is tried before the float one (the order the sorted module names gave, pinned by
``test_mapper_precedence.py``): its parser declines float operands and the float checker integer ones.
QLinearConv is still in :mod:`deeploy_generic_c.ops.qlinear` with the QOperator requantisers it shares with
QLinearMatMul and QGemm.
"""

from __future__ import annotations

from deeploy_core.plugin_api import NodeMapper
from deeploy_generic_c.ops.conv import float32, integer

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Conv": integer.MAPPERS["Conv"] + float32.MAPPERS["Conv"],
    "ConvTranspose": float32.MAPPERS["ConvTranspose"],
    "RequantizedConv": integer.MAPPERS["RequantizedConv"],
}
"""Op type -> mappers, first tried first."""
