"""The scratch each CMSIS-NN layer asks of the arena: ``*_get_buffer_size`` of the DSP (non-MVE) path, in Python.

Computed at compile time so the buffer counts in the arena budget (the
network never calls the ``get_buffer_size`` functions).  The plugin's tests
compare these numbers with CMSIS-NN's own functions compiled for the
Cortex-M4.  One deliberate difference: 1x1 stride-1 convolutions get
``arm_convolve_1x1_s8_fast``'s Arm Compiler 6 size (``2·C`` int16) instead of
GCC's 0, so a folder built with either compiler has the buffer its kernel uses.
"""

from __future__ import annotations

from deeploy_cortex_m.ops.cmsis_layer import Window

INT16, INT32 = 2, 4


def _im2col(win: Window) -> int:
    """``arm_convolve_s8_get_buffer_size``: two int16 im2col columns, padded to a multiple of 4."""
    cols = win.kh * win.kw * win.c
    return 2 * (cols + (-cols) % 4) * INT16


def conv(win: Window) -> int:
    """``arm_convolve_wrapper_s8_get_buffer_size_dsp``."""
    one_by_one = win.pad == (0, 0) and (win.kh, win.kw) == (1, 1) and win.dilation == (1, 1)
    if one_by_one:
        return 2 * win.c * INT16 if win.stride == (1, 1) else 0
    return _im2col(win)  # 1xN takes the general kernel's buffer off MVE


def depthwise_conv(win: Window, ch_mult: int) -> int:
    """``arm_depthwise_conv_wrapper_s8_get_buffer_size_dsp``."""
    if ch_mult != 1 or win.n != 1 or win.dilation != (1, 1):
        return 0
    if (win.kh, win.kw) == (3, 3) and max(win.pad) <= 1:
        return 0
    return win.c * win.kh * win.kw * INT16


def avgpool(win: Window) -> int:
    """``arm_avgpool_s8_get_buffer_size_dsp``: one int32 sum per channel."""
    return win.c * INT32
