"""TFLite's FullyConnected on CMSIS-NN, bit-exact with LiteRT on QEMU's Cortex-M4 (issue 35).

Three single-layer models isolate the cases: per-channel weights with a bias
and a fused Relu (``dense_relu``), one weight scale (``dense_per_tensor``:
``arm_fully_connected_s8``) and no bias (``dense_no_bias``: a QLinearMatMul,
which the weight pass turns into a QGemm).  Twenty rows of random int8 inputs
per run; every output must equal LiteRT's.  That is the proof that defining
``CMSIS_NN_USE_SINGLE_ROUNDING`` for the fully connected sources gives
LiteRT's single rounding (CMSIS-NN's default double rounding differs on ties).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx_graphsurgeon as gs
import pytest

from deeploy_cortex_m.ops.fc_weights import FullyConnectedWeightsRowMajor

from deeploy_core.testing.emulated_targets import CORTEX_M4_MPS2, run_self_test
from plugins.cortex_m.tests.cmsis_tflite_cases import (
    bit_exact, compile_and_run, compile_with_self_test, kernels, layer_models, needs_emulator,
)

CASES = {
    "dense_relu": "QGemm CMSIS-NN arm_fully_connected_per_channel_s8",
    "dense_per_tensor": "QGemm CMSIS-NN arm_fully_connected_s8",
    "dense_no_bias": "QGemm CMSIS-NN arm_fully_connected_per_channel_s8",
}


@pytest.mark.parametrize("platform", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.quant
@needs_emulator
def test_dense_layer_runs_cmsis_nn_bit_exact_with_litert(name: str, platform: str, tmp_path: Path) -> None:
    """On the M55, Helium's kernels start from the compile-time kernel sums: any wrong sum is a wrong output."""
    folder = layer_models()
    report = compile_and_run(folder / f"{name}.onnx", folder / f"{name}.tflite", tmp_path, platform=platform)
    assert kernels(report) == [CASES[name]]
    assert report["layers"][0]["requantization"]["rounding"] == "single"


@pytest.mark.quant
@needs_emulator
def test_cmsis_nn_default_double_rounding_would_not_be_litert(tmp_path: Path) -> None:
    """The same folder built without the single-rounding definition misses LiteRT on ties: the definition matters."""
    folder = layer_models()
    out = compile_with_self_test(folder / "dense_relu.onnx", folder / "dense_relu.tflite", tmp_path)
    makefile = out / "Makefile"
    text = makefile.read_text()
    assert text.count("-DCMSIS_NN_USE_SINGLE_ROUNDING") == 2  # the product's two translation units, nothing else
    makefile.write_text(text.replace("-DCMSIS_NN_USE_SINGLE_ROUNDING", ""))
    run = run_self_test(out, CORTEX_M4_MPS2, timeout=300)
    assert not bit_exact(run) and "MISMATCH" in run.stdout, run.describe()


def _matmul_graph(op: str, requantization: str = "tflite") -> tuple[gs.Graph, np.ndarray]:
    weights = np.arange(12, dtype=np.int8).reshape(3, 4)  # [K, N] as tf2onnx writes it
    scalar = [gs.Constant(f"c{i}", np.array(0.5 if i % 2 == 0 else 0, np.float32 if i % 2 == 0 else np.int8))
              for i in range(6)]
    a, y = gs.Variable("a", np.int8, (2, 3)), gs.Variable("y", np.int8, (2, 4))
    inputs = [a, *scalar[0:2], gs.Constant("w", weights), *scalar[2:4]]
    inputs += [*scalar[4:6]] if op == "QLinearMatMul" else [gs.Variable.empty(), *scalar[4:6]]
    node = gs.Node(op, domain="com.microsoft" if op == "QGemm" else "",
                   attrs={"requantization": requantization}, inputs=inputs, outputs=[y])
    return gs.Graph(nodes=[node], inputs=[a], outputs=[y]), weights


@pytest.mark.parametrize("op", ["QLinearMatMul", "QGemm"])
def test_weight_pass_stores_n_by_k_and_says_trans_b(op: str) -> None:
    """The pass leaves the same function: [N, K] weights with transB=1, QLinearMatMul as the QGemm it equals."""
    graph, weights = _matmul_graph(op)
    assert FullyConnectedWeightsRowMajor().apply_pass(graph, {}) == 1
    [node] = graph.nodes
    assert (node.op, node.domain, node.attrs["transB"]) == ("QGemm", "com.microsoft", 1)
    assert len(node.inputs) == 9 and not node.inputs[6].name
    np.testing.assert_array_equal(node.inputs[3].values, weights.T)


def test_weight_pass_leaves_other_arithmetics_alone() -> None:
    graph, weights = _matmul_graph("QLinearMatMul", requantization="float32")
    assert FullyConnectedWeightsRowMajor().apply_pass(graph, {}) is None
    assert graph.nodes[0].op == "QLinearMatMul"
