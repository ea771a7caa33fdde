"""The scratch each CMSIS-NN layer asks of the arena: ``*_get_buffer_size`` of the core's path, in Python.

Computed at compile time so the buffer counts in the arena budget (the
network never calls the ``get_buffer_size`` functions).  The plugin's tests
compare these numbers with CMSIS-NN's own functions compiled for the
Cortex-M4 (DSP extension) and the Cortex-M55 (Helium, ``mve``).  Where a
compiler changes the answer, the larger one is taken, so a folder built with
either GCC or Arm Compiler 6 has the buffer its kernel uses: 1x1 stride-1
convolutions on the DSP path get ``arm_convolve_1x1_s8_fast``'s Arm Compiler
size (``2·C`` int16) instead of GCC's 0, and a one-input-channel depthwise
layer on Helium gets both the size of its conversion to a regular convolution
(GCC converts from 2 output channels, Arm Compiler from 9) and that of
``arm_depthwise_conv_s8_opt``.
"""

from __future__ import annotations

from deeploy_cortex_m.ops.cmsis_layer import Window

INT16, INT32 = 2, 4
MVE_LANES = 16
"""int8 elements in one Helium Q register."""
CH_IN_BLOCK_MVE = 124
"""``arm_nnsupportfunctions.h``: channels ``arm_depthwise_conv_s8_opt`` handles per block on Helium."""


def _im2col(win: Window, mve: bool) -> int:
    """``arm_convolve_s8_get_buffer_size``: two int16 columns padded to 4 (DSP) or four int8 columns padded to a
    Q register (Helium)."""
    cols = win.kh * win.kw * win.c
    if mve:
        return 4 * -(-cols // MVE_LANES) * MVE_LANES
    return 2 * (cols + (-cols) % 4) * INT16


def _one_by_n_mve(win: Window) -> int:
    """``arm_convolve_1_x_n_s8_get_buffer_size_mve``: the padded row the 1xN kernel packs, unless its padding
    does not split the output the way it expects (then the general kernel's buffer)."""
    total_pad = (win.ow - 1) * win.stride[1] + win.kw - win.w
    asym_pad = total_pad % 2
    pad_x, stride_x = win.pad[1], win.stride[1]
    right = max(1, (pad_x + asym_pad + stride_x - 1) // stride_x) if pad_x + asym_pad else 0
    left = max(1, (pad_x + stride_x - 1) // stride_x) if pad_x else 0
    if right + max(win.ow - (right + left), 0) + left != win.ow:
        return _im2col(win, mve=True)
    pad_left = pad_x * win.c
    pad_right = right * win.c if asym_pad else pad_left
    left_elements = win.kw * win.c
    return max(left_elements + pad_left, left_elements - win.c + pad_right)


def conv(win: Window, mve: bool) -> int:
    """``arm_convolve_wrapper_s8_get_buffer_size`` (``_dsp`` or ``_mve``)."""
    one_by_one = win.pad == (0, 0) and (win.kh, win.kw) == (1, 1) and win.dilation == (1, 1)
    if one_by_one:
        return 2 * win.c * INT16 if win.stride == (1, 1) and not mve else 0
    one_by_n = win.h == 1 and win.dilation[1] == 1 and win.kh == 1 and (win.stride[1] * win.c) % 4 == 0
    if mve and one_by_n:
        return _one_by_n_mve(win)
    return _im2col(win, mve)  # 1xN takes the general kernel's buffer off MVE


def depthwise_conv(win: Window, ch_mult: int, mve: bool) -> int:
    """``arm_depthwise_conv_wrapper_s8_get_buffer_size`` (``_dsp`` or ``_mve``)."""
    as_conv = 0
    if mve and win.c == 1 and win.oc > 1:
        # arm_depthwise_conv_to_conv_s8: the filter transposed to [C_out, H, W, 1] beside the buffer of the
        # regular convolution it becomes (same window, one input channel)
        as_conv = conv(win, mve=True) + win.oc * win.kh * win.kw
    if ch_mult != 1 or win.n != 1 or win.dilation != (1, 1):
        return as_conv
    if mve:
        return max(as_conv, 4 * CH_IN_BLOCK_MVE * win.kw * win.kh)
    if (win.kh, win.kw) == (3, 3) and max(win.pad) <= 1:
        return 0
    return win.c * win.kh * win.kw * INT16


def avgpool(win: Window, mve: bool) -> int:
    """``arm_avgpool_s8_get_buffer_size``: one int32 sum per channel on the DSP path, none on Helium."""
    return 0 if mve else win.c * INT32
