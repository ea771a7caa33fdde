"""The Cortex-M deployer: generic C's stages, plus a notice when the quantization mode keeps CMSIS-NN idle.

CMSIS-NN computes TFLite's integer arithmetic.  In ``--quantization exact``
(the core's default) an int8 layer must reproduce ONNX Runtime's float32
rounding instead, which CMSIS-NN cannot, so those layers run on generic C's
kernels: correct, but not what a user compiling for a Cortex-M expects.  The
mode is the core's setting and means the same on every platform, so it is
not changed here; the compile says, in one notice line, how many layers that
concerns and which option runs them on CMSIS-NN.
"""

from __future__ import annotations

from deeploy_core.plugin_api import NetworkDeployer

NOTICE = "notice: "
"""How the core's compile command recognises a line of the report's warnings it shows as a notice."""
TFLITE_CAPABLE = ("QLinearConv", "QGemm", "QLinearMatMul", "QLinearAdd", "QLinearMul", "QLinearAveragePool",
                  "QLinearSoftmax")
"""Integer ops CMSIS-NN runs in fixed-point mode (TFLite's arithmetic)."""


class CortexMDeployer(NetworkDeployer):
    """A network deployer for a Cortex-M platform (its data composed in :mod:`deeploy_cortex_m.platform`)."""

    def lower(self) -> None:
        super().lower()
        compilation = self.compilation
        if compilation.settings.quantization != "exact":
            return
        exact = [node for node in compilation.graph.nodes
                 if node.op in TFLITE_CAPABLE and node.attrs.get("requantization") == "float32"]
        if exact:
            ops = ", ".join(sorted({node.op for node in exact}))
            compilation.warnings.append(
                f"{NOTICE}{self.platform.name}: {len(exact)} int8 layer(s) ({ops}) keep ONNX Runtime's rounding "
                f"(--quantization exact) on generic C's kernels; --quantization fixed-point runs them on CMSIS-NN "
                f"with TFLite's arithmetic (bit-exact with LiteRT)")
