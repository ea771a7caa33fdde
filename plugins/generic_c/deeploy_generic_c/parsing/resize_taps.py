"""Where each output position of a Resize reads from, per axis: the input indices and their weights.

Why at compile time: shapes, scales and attributes are constants of the
layer, so the coordinate arithmetic (and with it every rounding choice at a
pixel boundary) is done once here, in numpy with the precisions ONNX's
reference (``onnx/reference/ops/op_resize.py``) uses, and the C kernel only
reads tables.  That reference computes source coordinates in float64 from the
float32 value of each scale, except for ``tf_crop_and_resize``, whose region
of interest keeps the roi tensor's own precision in ``roi[1] - roi[0]`` and
``roi[0] * (width - 1)``, and cubic weights, which numpy evaluates in float32
because the reference passes ``cubic_coeff_a`` as the attribute's float32;
nearest index choices and weights therefore come out exactly as the
reference's.  Resize is separable: each axis's taps combine the values the
previous axis's taps produced (see :mod:`._resize_c`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
MODES = ("nearest", "linear", "cubic")


@dataclass(frozen=True)
class Interpolation:
    """The attributes that decide the taps of every axis."""

    mode: str
    coordinate_mode: str
    nearest_mode: str
    cubic_a: float
    exclude_outside: bool
    antialias: bool


@dataclass(frozen=True)
class AxisTaps:
    """One resized axis: ``indices[o, t]`` (clamped into the input) and ``weights[o, t]`` of output position ``o``;
    ``outside[o]`` marks positions that take the extrapolation value (tf_crop_and_resize only)."""

    indices: np.ndarray
    weights: np.ndarray
    outside: np.ndarray

    @property
    def count(self) -> int:
        """Taps per output position."""
        return int(self.indices.shape[1])


def _nearest(ratio: float, mode: str) -> list[float]:
    """Weights of the two neighbours (left, right) around a source coordinate ``ratio`` past the left one."""
    if ratio == 1.0:
        return [0.0, 1.0]
    right = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": False, "ceil": True}[mode]
    return [0.0, 1.0] if right else [1.0, 0.0]


def _cubic(ratio: float, a: np.float32) -> list[float]:
    """Keys' cubic convolution weights of the four neighbours, written as the reference writes them (``a`` is
    the attribute's float32, so numpy evaluates these in float32 as the reference does)."""
    r, s = ratio, 1 - ratio
    weights = [
        ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
        ((a + 2) * r - (a + 3)) * r * r + 1,
        ((a + 2) * s - (a + 3)) * s * s + 1,
        ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a,
    ]
    return [float(weight) for weight in np.array(weights)]


def _cubic_kernel(x: float, a: np.float32) -> np.float32 | float:
    x = abs(x)
    square = x * x
    cube = x * square
    if x <= 1:
        return (a + 2) * cube - (a + 3) * square + 1
    if x < 2:
        return a * cube - 5 * a * square + 8 * a * x - 4 * a
    return 0.0


def _linear_antialias(ratio: float, scale: float) -> list[float]:
    """The triangle filter stretched by 1 / scale when downsampling (antialias=1), normalised."""
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    arguments = (np.arange(start, 2 - start) - ratio) * scale
    weights = np.clip(1 - np.abs(arguments), 0, 1)
    return [float(weight) for weight in np.array(weights) / sum(weights)]  # Python's sum, as the reference's


def _cubic_antialias(ratio: float, scale: float, a: np.float32) -> list[float]:
    """The cubic filter stretched by 1 / scale when downsampling (antialias=1), normalised."""
    scale = min(scale, 1.0)
    start = int(np.floor(-2 / scale) + 1)
    weights = [_cubic_kernel(scale * (i - ratio), a) for i in range(start, 2 - start)]
    return [float(weight) for weight in np.array(weights) / sum(weights)]


def _weights_rule(interpolation: Interpolation) -> Callable[[float, float], list[float]]:
    mode, a = interpolation.mode, np.float32(interpolation.cubic_a)
    if mode == "nearest":
        return lambda ratio, scale: _nearest(ratio, interpolation.nearest_mode)
    if mode == "linear":
        return _linear_antialias if interpolation.antialias else (lambda ratio, scale: [1 - ratio, ratio])
    if interpolation.antialias:
        return lambda ratio, scale: _cubic_antialias(ratio, scale, a)
    return lambda ratio, scale: _cubic(ratio, a)


def source_coordinates(coordinate_mode: str, count: int, scale: float, width: int,
                       roi: tuple[np.floating, np.floating] | None) -> tuple[np.ndarray, np.ndarray]:
    """The source coordinate of each of ``count`` output positions (float64) and which lie outside the crop.

    Operand types follow the reference on purpose: ``scale`` a Python float,
    the output index a float64 array, the roi entries numpy scalars of the roi
    tensor's type (numpy 2 keeps ``roi[0] * (width - 1)`` in that type).
    """
    y = np.arange(count, dtype=np.float64)
    scaled_width = scale * width
    outside = np.zeros(count, dtype=bool)
    if coordinate_mode == "align_corners":
        x = np.zeros(count) if scaled_width == 1 else y * (width - 1) / (scaled_width - 1)
    elif coordinate_mode == "asymmetric":
        x = y / scale
    elif coordinate_mode == "tf_crop_and_resize":
        assert roi is not None, "the parser checks that tf_crop_and_resize has a roi"
        if scaled_width == 1:
            x = np.full(count, (roi[1] - roi[0]) * (width - 1) / 2, dtype=np.float64)
        else:
            x = y * (roi[1] - roi[0]) * (width - 1) / (scaled_width - 1)
        x = x + roi[0] * (width - 1)
        outside = (x < 0) | (x > width - 1)
    elif coordinate_mode == "pytorch_half_pixel":
        x = np.full(count, -0.5) if scaled_width == 1 else (y + 0.5) / scale - 0.5
    elif coordinate_mode == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric: the crop's centre stays the canvas's centre when the output size was rounded
        offset = width / 2 * (1 - count / scaled_width)
        x = offset + (y + 0.5) / scale - 0.5
    return x, outside


def axis_taps(interpolation: Interpolation, width: int, count: int, scale: float,
              roi: tuple[np.floating, np.floating] | None) -> AxisTaps:
    """The taps of an axis of ``width`` inputs resized to ``count`` outputs with ``scale``.

    The window of each position is the n inputs nearest to its source
    coordinate (ties to the left; at an integer coordinate the left
    neighbour's weight is the whole one), indices past the edges clamped
    (edge padding); ``exclude_outside`` drops those and renormalises.
    """
    x, outside = source_coordinates(interpolation.coordinate_mode, count, scale, width, roi)
    left = np.floor(x)
    ratios = np.where(x == left, 1.0, x - left)
    rule = _weights_rule(interpolation)
    weights = np.array([rule(float(ratio), scale) for ratio in ratios], dtype=np.float64).reshape(count, -1)
    n = weights.shape[1]
    pad = int(math.ceil(n / 2))
    padded = x + pad
    base = np.floor(padded).astype(np.int64)
    fraction = padded - base
    if n % 2 == 0:
        start = base + np.where(fraction == 0, -(n // 2), -(n // 2) + 1)
    else:
        start = base + np.where(fraction <= 0.5, -((n - 1) // 2), -((n - 1) // 2) + 1)
    indices = start[:, None] + np.arange(n)[None, :] - pad
    if interpolation.exclude_outside:
        weights = np.where((indices < 0) | (indices >= width), 0.0, weights)
        sums = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(sums == 0, 1.0, sums)
    indices = np.clip(indices, 0, width - 1)
    if interpolation.mode == "nearest":  # one neighbour has the whole weight: keep only it
        chosen = np.argmax(weights, axis=1)
        rows = np.arange(count)
        indices, weights = indices[rows, chosen][:, None], np.ones((count, 1))
    return AxisTaps(indices.astype(np.int64), weights, outside)
