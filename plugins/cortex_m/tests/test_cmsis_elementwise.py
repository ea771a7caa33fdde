"""TFLite's int8 Add (with a fused Relu) and Mul on CMSIS-NN, bit-exact with LiteRT on QEMU's Cortex-M4 (issue 35).

``add_relu`` and ``mul`` take two [1, 6, 6, 4] operands (twenty rows per run);
the layer must be CMSIS-NN's, and a broadcasting node must stay generic C's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx_graphsurgeon as gs
import pytest

from plugins.cortex_m.tests.cmsis_tflite_cases import compile_and_run, kernels, layer_models, needs_emulator
from deeploy_core.plugin_api import NodeMismatch
from deeploy_cortex_m.ops.elementwise import CmsisElementwiseParser

CASES = {"add_relu": "QLinearAdd CMSIS-NN arm_elementwise_add_s8", "mul": "QLinearMul CMSIS-NN arm_elementwise_mul_s8"}


@pytest.mark.quant
@needs_emulator
@pytest.mark.parametrize("platform", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_elementwise_layer_runs_cmsis_nn_bit_exact_with_litert(name: str, platform: str, tmp_path: Path) -> None:
    folder = layer_models()
    report = compile_and_run(folder / f"{name}.onnx", folder / f"{name}.tflite", tmp_path, platform=platform)
    assert kernels(report) == [CASES[name]]


def test_broadcasting_falls_through_to_generic_c() -> None:
    from deeploy_core.plugin_api import NetworkContext, dtypes
    from deeploy_core.ir.buffers import BufferKind

    ctxt = NetworkContext()
    tensors = []
    for name, shape in (("a", (1, 4, 4)), ("b", (1, 1, 4)), ("y", (1, 4, 4))):
        ctxt.add(name, dtypes.INT8, shape, BufferKind.ACTIVATION)
        tensors.append(gs.Variable(name, np.int8, shape))
    scales = []
    for index in range(3):
        ctxt.add(f"s{index}", dtypes.FLOAT32, (), BufferKind.CONSTANT, values=np.array(0.1, np.float32))
        ctxt.add(f"z{index}", dtypes.INT8, (), BufferKind.CONSTANT, values=np.array(0, np.int8))
        scales.append((gs.Constant(f"s{index}", np.array(0.1, np.float32)), gs.Constant(f"z{index}", np.array(0, np.int8))))
    a, b, y = tensors
    node = gs.Node("QLinearAdd", domain="com.microsoft", attrs={"requantization": "tflite"},
                   inputs=[a, *scales[0], b, *scales[1], *scales[2]], outputs=[y])
    with pytest.raises(NodeMismatch, match="broadcast"):
        CmsisElementwiseParser().parse(node, ctxt)
