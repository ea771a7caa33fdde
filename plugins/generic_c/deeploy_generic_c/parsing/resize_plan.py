"""Which axes a Resize changes, with the scale, output size and region of interest of each.

Resize says the same thing in several ways (``scales`` or ``sizes``, for all
axes or for the ``axes`` attribute's, stretched or kept in aspect), and the
coordinate arithmetic depends on which: with ``sizes`` the scale is the
float64 quotient of the sizes, with ``scales`` it is the float32 scale itself
and the size its floor times the input size.  This module reduces every form
to one :class:`AxisResize` per changed axis, computed the way ONNX's
reference (``onnx/reference/ops/op_resize.py``) does, so that the taps built
from it choose the reference's pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

POLICIES = ("stretch", "not_larger", "not_smaller")


class ResizeFormError(ValueError):
    """The node's scales, sizes, axes or roi do not describe a resize (the message says why, in one line)."""


@dataclass(frozen=True)
class AxisResize:
    """Axis ``axis`` goes from ``width`` to ``count`` elements with ``scale``; ``roi`` is its crop (start, end)."""

    axis: int
    width: int
    count: int
    scale: float
    roi: tuple[np.floating, np.floating] | None


def _listed_axes(axes: list[int] | None, rank: int) -> list[int]:
    if axes is None:
        return list(range(rank))
    listed = []
    for axis in axes:
        if not -rank <= axis < rank:
            raise ResizeFormError(f"axis {axis} is out of range for rank {rank}")
        listed.append(axis % rank)
    if len(set(listed)) != len(listed):
        raise ResizeFormError(f"axes {axes} repeat an axis")
    return listed


def resized_axes(shape: tuple[int, ...], scales: np.ndarray | None, sizes: np.ndarray | None, axes: list[int] | None,
                 roi: np.ndarray | None, policy: str) -> tuple[list[AxisResize], tuple[int, ...]]:
    """The axes that change (in the order the node lists them) and the output shape.

    An axis whose scale is 1, size unchanged and crop the whole axis is left
    out, as the reference skips it (it is then a plain copy).
    """
    listed = _listed_axes(axes, len(shape))
    widths = [shape[axis] for axis in listed]
    given = len(listed)
    if (scales is None) == (sizes is None):
        raise ResizeFormError("exactly one of scales and sizes must be given")
    if roi is not None and roi.size != 2 * given:
        raise ResizeFormError(f"roi has {roi.size} values, expected {2 * given}")
    if policy not in POLICIES:
        raise ResizeFormError(f"keep_aspect_ratio_policy={policy!r} is not one of {', '.join(POLICIES)}")
    factors: list[float]
    if sizes is not None:
        if sizes.size != given:
            raise ResizeFormError(f"sizes has {sizes.size} values, expected {given}")
        if np.any(sizes < 0):
            raise ResizeFormError(f"sizes {sizes.tolist()} has a negative size")
        quotients = [sizes[i] / widths[i] for i in range(given)]
        if policy == "stretch":
            counts = [int(size) for size in sizes]
            factors = [float(quotient) for quotient in quotients]
        else:
            chosen = float(min(quotients) if policy == "not_larger" else max(quotients))
            counts = [int(chosen * width + 0.5) for width in widths]
            factors = [chosen] * given
    else:
        assert scales is not None
        if scales.size != given:
            raise ResizeFormError(f"scales has {scales.size} values, expected {given}")
        if not np.all(scales > 0):
            raise ResizeFormError(f"scales {scales.tolist()} must all be positive")
        counts = [int(count) for count in (scales * np.array(widths)).astype(np.int64)]
        factors = [float(scale) for scale in scales]
    out_shape = list(shape)
    changed = []
    for i, axis in enumerate(listed):
        out_shape[axis] = counts[i]
        crop = None if roi is None else (roi[i], roi[i + given])
        whole = crop is None or (math.isclose(float(crop[0]), 0.0) and math.isclose(float(crop[1]), 1.0))
        if math.isclose(factors[i], 1.0) and counts[i] == widths[i] and whole:
            continue
        changed.append(AxisResize(axis, widths[i], counts[i], factors[i], crop))
    return changed, tuple(out_shape)
