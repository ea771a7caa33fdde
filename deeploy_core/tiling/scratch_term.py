"""How the tiler's CP model counts a kernel's scratch: a tensor-like term that grows with some output axes.

Scratch sizes are whatever a template declares for the shapes it is parsed
on, so the model learns them by probing the kernel on tiles.  Probing a tile
one element long along an axis tells whether the scratch grows with that axis
(an im2col buffer grows with the output rows and columns, not with the output
channels), but a one-element extent is where kernels take special paths: a
convolution of one input channel cut to one output channel is depthwise and
needs no im2col at all.  Trusting that probe alone made the output channels of
DS-CNN's first convolution (1 -> 64 channels, 10 x 4 window on 49 x 10) look
like a scratch-scaling axis, the model counted a 22-channel tile's im2col at
22/64 of the layer's while the kernel asks for all of it on every core, and L1
overflowed (81,920 bytes of scratch where the model had 44,000).  So an axis
scales the scratch only when one element along it needs less than the whole
layer and two elements need at most twice what one needs: the slope taken
from one element then covers two, whereas a jump from one to two (no scratch
to all of it) says the one-element tile took another path.
"""

from __future__ import annotations

import math

from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.midend.memory_plan import align_up
from deeploy_core.tiling.cp_model import TensorTerm
from deeploy_core.tiling.geometry import Box, Extent, TileConstraint
from deeploy_core.tiling.tiles import scratch_bytes

SCRATCH_BLOCK = "(scratch)"
"""The model block standing for every scratch buffer of a layer."""


def _cut(whole: Box, axes: list[int] | tuple[int, ...], length: int) -> Box:
    """``whole`` with every axis in ``axes`` cut to its first ``length`` elements (at most the whole extent)."""
    return tuple((0, min(length, stop)) if axis in axes else (0, stop) for axis, (_, stop) in enumerate(whole))


def scratch_term(layer: Layer, ctxt: NetworkContext, constraint: TileConstraint, out_shape: tuple[int, ...],
                 tiled_axes: tuple[int, ...], alignment: int, copies: int) -> tuple[TensorTerm | None, int]:
    """The scratch of ``layer``'s tiles as a model term (None: constant) and the constant bytes beside it.

    ``copies`` is how many copies the level holds (one per core on a cluster,
    an upper bound of the cores' shares).  An axis is a *scaling* axis when a
    tile one element long along it needs less scratch than the whole layer
    and a tile two elements long needs at most twice as much as that one.  The
    term is ``unit × Π tile extent`` over the scaling axes, where ``unit`` is
    the largest bytes per element among the whole layer, the smallest tile
    (one element along every scaling axis, whole along the others) and the
    tile two elements long along them.  A kernel whose scratch stops growing
    (im2col by bounded blocks) has its steepest slope on the small tiles, so
    the term never counts a tile's scratch short.
    """
    full = sum(layer.binding.template.transient_buffers(layer.representation).values())
    if full == 0:
        return None, 0
    whole = tuple((0, dim) for dim in out_shape)
    scaling = []
    for axis in tiled_axes:
        dim = out_shape[axis]
        if dim <= 1:
            continue
        one = scratch_bytes(layer, ctxt, constraint, _cut(whole, (axis,), 1))
        two = full if dim == 2 else scratch_bytes(layer, ctxt, constraint, _cut(whole, (axis,), 2))
        if one < full and two <= 2 * one:
            scaling.append(axis)
    if not scaling:
        return None, copies * align_up(full, alignment) + alignment - 1
    unit = -(-full // math.prod(out_shape[a] for a in scaling))
    for length in (1, 2):
        probe = _cut(whole, scaling, length)
        elements = math.prod(probe[a][1] for a in scaling)
        unit = max(unit, -(-scratch_bytes(layer, ctxt, constraint, probe) // elements))
    term = TensorTerm(SCRATCH_BLOCK, tuple(Extent(out_shape[a], a) for a in scaling), unit * copies, 1,
                      block=SCRATCH_BLOCK)
    return term, (copies + 1) * (alignment - 1)
