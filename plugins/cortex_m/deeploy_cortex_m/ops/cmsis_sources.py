"""The CMSIS-NN sources each entry point reaches on the DSP (non-MVE) path, relative to CMSIS-NN's root.

Found from the symbols of the objects (what each defines and leaves
undefined) and checked by the plugin's tests: a program calling the entry
point links against exactly these files.  The folder's build compiles only
the files of the kernels a network uses.
"""

from __future__ import annotations

_CONV = "Source/ConvolutionFunctions/"
_SUPPORT = "Source/NNSupportFunctions/"
_POOL = "Source/PoolingFunctions/"

SOURCES: dict[str, tuple[str, ...]] = {
    "arm_convolve_wrapper_s8": (
        f"{_CONV}arm_convolve_wrapper_s8.c", f"{_CONV}arm_convolve_1x1_s8_fast.c", f"{_CONV}arm_convolve_1x1_s8.c",
        f"{_CONV}arm_convolve_1_x_n_s8.c", f"{_CONV}arm_convolve_s8.c", f"{_CONV}arm_nn_mat_mult_kernel_s8_s16.c",
        f"{_CONV}arm_nn_mat_mult_kernel_row_offset_s8_s16.c", f"{_SUPPORT}arm_nn_mat_mult_nt_t_s8.c",
        f"{_SUPPORT}arm_s8_to_s16_unordered_with_offset.c",
    ),
    "arm_depthwise_conv_wrapper_s8": (
        f"{_CONV}arm_depthwise_conv_wrapper_s8.c", f"{_CONV}arm_depthwise_conv_3x3_s8.c",
        f"{_CONV}arm_depthwise_conv_s8_opt.c", f"{_CONV}arm_depthwise_conv_s8.c",
        f"{_CONV}arm_depthwise_conv_get_buffer_sizes_s8.c", f"{_CONV}arm_convolve_get_buffer_sizes_s8.c",
        f"{_SUPPORT}arm_q7_to_q15_with_offset.c",
    ),
    "arm_avgpool_s8": (f"{_POOL}arm_avgpool_s8.c", f"{_POOL}arm_avgpool_get_buffer_sizes_s8.c"),
    "arm_max_pool_s8": (f"{_POOL}arm_max_pool_s8.c",),
}
"""Entry point -> the sources it needs."""
