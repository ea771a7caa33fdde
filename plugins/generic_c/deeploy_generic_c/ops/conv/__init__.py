"""The convolution family: every numeric variant of Conv, ConvTranspose and Deeploy's RequantizedConv.

``integer`` holds the raw-integer and requantised kernels, ``float32`` the float ones, ``qlinear`` the QOperator
``QLinearConv`` (one mapper per requantisation arithmetic).  For ``Conv`` the integer mapper is tried before the
float one (the order the sorted module names gave, pinned by ``test_mapper_precedence.py``): its parser declines
float operands and the float checker integer ones.
"""

from __future__ import annotations

from deeploy_core.plugin_api import CustomOpSchema, NodeMapper
from deeploy_generic_c.ops.conv import float32, integer, qlinear
from deeploy_generic_c.parsing.requantised_schemas import conv_shape, requantised_type

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Conv": integer.MAPPERS["Conv"] + float32.MAPPERS["Conv"],
    "ConvTranspose": float32.MAPPERS["ConvTranspose"],
    "RequantizedConv": integer.MAPPERS["RequantizedConv"],
    "QLinearConv": qlinear.MAPPERS["QLinearConv"],
}
"""Op type -> mappers, first tried first."""

SCHEMAS: tuple[CustomOpSchema, ...] = (CustomOpSchema("RequantizedConv", shapes=conv_shape, types=requantised_type),)
"""``RequantizedConv(x, w, [bias], mul, add)`` has no ONNX schema.

It is the form this platform's own lowering fuses ``Conv → RequantShift`` into (mul before add, the Conv's and
the RequantShift's attributes); declaring it lets a model that was fused already (by this compiler or by hand)
come in as it is.  Deeploy's PULP deployer builds a node of the same name with a different contract (rounding
folded into ``add``, a ``shift`` attribute), which only exists inside Deeploy.
"""
