"""How the tiler cuts an operator on a platform, in words, for ``supported-ops``.

The listing must name the constraint the tiler would really use, so it asks
the tiler's own lookup (:func:`deeploy_core.tiling.constraints.constraint_for`),
keyed by the op instead of by a layer, since no model is at hand.
"""

from __future__ import annotations

import re

from deeploy_core.mapping import NodeMapper
from deeploy_core.platform import Platform
from deeploy_core.tiling.constraints import constraint_for
from deeploy_core.tiling.geometry import TileConstraint


def op_tile_constraint(op_key: str, mapper: NodeMapper, platform: Platform) -> TileConstraint:
    """The constraint a layer of ``op_key`` mapped by ``mapper`` gets on ``platform``."""
    return constraint_for(op_key, mapper, platform.tile_constraints)


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
