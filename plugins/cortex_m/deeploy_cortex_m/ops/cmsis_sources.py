"""The CMSIS-NN sources each entry point reaches, on the DSP-extension path (Cortex-M4/M7) and on the Helium path
(``ARM_MATH_MVEI``, Cortex-M55), relative to CMSIS-NN's root.

Found from the symbols of the objects (what each defines and leaves
undefined) when compiled for each path, and checked by the plugin's tests: a
program calling the entry point links against exactly these files.  The
folder's build compiles only the files of the kernels a network uses.  The
paths differ: the MVE convolutions multiply int8 directly
(``arm_nn_mat_mult_nt_t_s8``) where the DSP ones widen to int16 first, and
the MVE depthwise wrapper turns a one-input-channel layer into a regular
convolution.
"""

from __future__ import annotations

_BASIC = "Source/BasicMathFunctions/"
_CONV = "Source/ConvolutionFunctions/"
_FC = "Source/FullyConnectedFunctions/"
_POOL = "Source/PoolingFunctions/"
_SOFTMAX = "Source/SoftmaxFunctions/"
_SUPPORT = "Source/NNSupportFunctions/"
_TRANSPOSE = "Source/TransposeFunctions/"

_CONV_COMMON = (
    f"{_CONV}arm_convolve_wrapper_s8.c", f"{_CONV}arm_convolve_1x1_s8_fast.c", f"{_CONV}arm_convolve_1x1_s8.c",
    f"{_CONV}arm_convolve_1_x_n_s8.c", f"{_CONV}arm_convolve_s8.c", f"{_SUPPORT}arm_nn_mat_mult_nt_t_s8.c",
)
_SAME_ON_BOTH: dict[str, tuple[str, ...]] = {
    "arm_max_pool_s8": (f"{_POOL}arm_max_pool_s8.c",),
    "arm_fully_connected_s8": (f"{_FC}arm_fully_connected_s8.c", f"{_SUPPORT}arm_nn_vec_mat_mult_t_s8.c"),
    "arm_fully_connected_per_channel_s8": (f"{_FC}arm_fully_connected_per_channel_s8.c",
                                           f"{_SUPPORT}arm_nn_vec_mat_mult_t_per_ch_s8.c"),
    "arm_elementwise_add_s8": (f"{_BASIC}arm_elementwise_add_s8.c",),
    "arm_elementwise_mul_s8": (f"{_BASIC}arm_elementwise_mul_s8.c",),
    "arm_softmax_s8": (f"{_SOFTMAX}arm_softmax_s8.c", f"{_SOFTMAX}arm_nn_softmax_common_s8.c"),
}

DSP: dict[str, tuple[str, ...]] = {
    "arm_convolve_wrapper_s8": (
        *_CONV_COMMON, f"{_CONV}arm_nn_mat_mult_kernel_s8_s16.c", f"{_CONV}arm_nn_mat_mult_kernel_row_offset_s8_s16.c",
        f"{_SUPPORT}arm_s8_to_s16_unordered_with_offset.c",
    ),
    "arm_depthwise_conv_wrapper_s8": (
        f"{_CONV}arm_depthwise_conv_wrapper_s8.c", f"{_CONV}arm_depthwise_conv_3x3_s8.c",
        f"{_CONV}arm_depthwise_conv_s8_opt.c", f"{_CONV}arm_depthwise_conv_s8.c",
        f"{_CONV}arm_depthwise_conv_get_buffer_sizes_s8.c", f"{_CONV}arm_convolve_get_buffer_sizes_s8.c",
        f"{_SUPPORT}arm_q7_to_q15_with_offset.c",
    ),
    "arm_avgpool_s8": (f"{_POOL}arm_avgpool_s8.c", f"{_POOL}arm_avgpool_get_buffer_sizes_s8.c"),
    **_SAME_ON_BOTH,
}
"""Entry point -> the sources it needs on the DSP-extension path."""

MVE: dict[str, tuple[str, ...]] = {
    "arm_convolve_wrapper_s8": _CONV_COMMON,
    "arm_depthwise_conv_wrapper_s8": (
        f"{_CONV}arm_depthwise_conv_wrapper_s8.c", f"{_CONV}arm_depthwise_conv_s8_opt.c",
        f"{_CONV}arm_depthwise_conv_s8.c", f"{_CONV}arm_depthwise_conv_get_buffer_sizes_s8.c",
        f"{_CONV}arm_convolve_get_buffer_sizes_s8.c", f"{_SUPPORT}arm_nn_depthwise_conv_nt_t_s8.c",
        f"{_TRANSPOSE}arm_transpose_s8.c", *_CONV_COMMON,
    ),
    "arm_avgpool_s8": (f"{_POOL}arm_avgpool_s8.c",),
    **_SAME_ON_BOTH,
}
"""Entry point -> the sources it needs on the Helium (MVE) path."""


def sources(entry: str, mve: bool) -> tuple[str, ...]:
    """The CMSIS-NN files a program calling ``entry`` compiles, on the path the core takes."""
    return (MVE if mve else DSP)[entry]
