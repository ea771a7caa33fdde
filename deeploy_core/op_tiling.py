"""How the tiler cuts an operator on a platform, in words, for ``supported-ops``.

The listing must name the constraint the tiler would really use, so it asks
in the same order as :func:`deeploy_core.tiling.constraints.tile_constraint_of`
(the kernel's own, the platform's policy, the core's ONNX geometry, untiled),
keyed by the op instead of by a layer, since no model is at hand.
"""

from __future__ import annotations

import re

from deeploy_core.mapping import NodeMapper
from deeploy_core.platform import Platform
from deeploy_core.tiling.constraints import DEFAULT_TILE_CONSTRAINTS, UNTILED
from deeploy_core.tiling.geometry import TileConstraint


def op_tile_constraint(op_key: str, mapper: NodeMapper, platform: Platform) -> TileConstraint:
    """The constraint a layer of ``op_key`` mapped by ``mapper`` gets on ``platform``."""
    if mapper.tile_constraint is not None:
        return mapper.tile_constraint
    return platform.tile_constraints.get(op_key) or DEFAULT_TILE_CONSTRAINTS.get(op_key, UNTILED)


def tiling_text(op_key: str, mapper: NodeMapper, platform: Platform) -> dict[str, str]:
    """``{"constraint": "sliding-window", "description": "..."}``; ``untiled`` when nothing may be cut.

    A platform without transfers (``Platform.transfers is None``) never
    tiles, whatever the op's geometry would allow.
    """
    if platform.transfers is None:
        return {"constraint": "untiled", "description": "the platform does not tile: whole tensors in one memory"}
    constraint = op_tile_constraint(op_key, mapper, platform)
    kind = type(constraint)
    name = "untiled" if kind is TileConstraint else re.sub(r"(?<!^)(?=[A-Z])", "-", kind.__name__).lower()
    doc = (kind.__doc__ or "").strip().splitlines()
    return {"constraint": name, "description": doc[0] if doc else ""}
