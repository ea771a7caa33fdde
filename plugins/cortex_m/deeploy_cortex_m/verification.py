"""What the CMSIS-NN layers' arithmetic was checked against, for ``supported-ops``.

The channels-last ops exist only after the Cortex-M lowering (a model never
holds them): their evidence is the QEMU runs of int8 TFLite models, layer by
layer and whole networks, against LiteRT's reference kernels.  Every other op
keeps generic C's statement, since its kernels are generic C's.
"""

from __future__ import annotations

from deeploy_core.plugin_api import OpVerification


def _litert(layers: str, tests: str) -> tuple[OpVerification, ...]:
    return (OpVerification("litert", f"--quantization fixed-point on tf2onnx --tflite models, run on QEMU's "
                                     f"mps2-an386 (DSP kernels) and mps3-an547 (Helium kernels): 0 LSB against "
                                     f"LiteRT's reference kernels on {layers} "
                                     f"(plugins/cortex_m/tests/{tests}, test_mlperf_tiny_on_cortex_m.py)"),)


CMSIS_VERIFICATION: dict[str, tuple[OpVerification, ...]] = {
    "CmsisConv": _litert("Conv layers (3x3, strided, 1x1, the first 10x4 of DS-CNN)", "test_cmsis_conv_qemu.py"),
    "CmsisDepthwiseConv": _litert("DepthwiseConv layers (3x3, ReLU6)", "test_cmsis_conv_qemu.py"),
    "CmsisAveragePool": _litert("AveragePool layers (same and valid padding)", "test_cmsis_conv_qemu.py"),
    "CmsisMaxPool": (OpVerification("onnxruntime", "an int8 MaxPool network matches ONNX Runtime bit for bit on "
                                                   "QEMU's mps2-an386 and mps3-an547 (plugins/cortex_m/tests/"
                                                   "test_cmsis_conv_qemu.py)"),),
}
"""The channels-last ops' checks (the ONNX ops CMSIS-NN also serves keep generic C's, which list LiteRT too)."""
