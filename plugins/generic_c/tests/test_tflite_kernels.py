"""Fixed-point mode's TFLite kernels (ops/elementwise/qlinear_tflite.py, ops/pooling/ and
ops/softmax/qlinear_tflite.py) compiled and run, against TFLite's arithmetic.

Fused nodes carrying ``requantization="tflite"`` are built directly (one
model holds every case, so one compile and one build check them all), compiled
for generic-c and run on random inputs; each output must equal the numpy model
of TFLite's kernel (deeploy_generic_c.parsing.tflite_arithmetic) element for
element.  The numpy model itself is held to LiteRT's reference kernels in
test_tflite_litert.py, and test_tflite_arithmetic.py holds it to exact
arithmetic where it has a closed form.

Cases aim at what differs between arithmetics: Add's two scales and a
broadcast operand, Mul with a multiplier above one (TFLite shifts left first),
pools with SAME padding (TFLite counts only the pixels inside the input),
softmax with a large input scale (differences beyond the radius output the
minimum), along a middle axis and over a flattened tail (opset < 13), and
every op with a clamp.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.plugins import PluginHost
from plugins.generic_c.tests.tflite_cases import CASES, Case, fused_model, run_cases


def test_tflite_kernels_equal_tflite_arithmetic(generic_c_host: PluginHost, runtime_cache: Path,
                                                tmp_path: Path) -> None:
    wrong, report = run_cases(CASES, tmp_path, generic_c_host, runtime_cache, rounds=12)
    assert wrong == [0] * len(CASES)
    layers = report["layers"] if isinstance(report, dict) else []
    arithmetic = [layer.get("requantization", {}).get("arithmetic") for layer in layers
                  if isinstance(layer, dict) and isinstance(layer.get("requantization"), dict)]
    assert arithmetic.count("tflite") == len(CASES), layers


def _refusals(case: Case, tmp_path: Path, host: PluginHost) -> list[str]:
    """The reason every kernel of the node's op gave for refusing it."""
    path = tmp_path / "refused.onnx"
    onnx.save(fused_model([case]), path)
    with pytest.raises(UnsupportedModelError) as error:
        compile_model(path, CompileOptions(platform="generic-c", quantization="fixed-point"), host)
    return [mismatch.reason for node in error.value.nodes for mismatch in node.mismatches]


@pytest.mark.parametrize(("case", "reason"), [
    (Case("QLinearAveragePool", [(1, 2, 4, 4)], [0.1], [0], (1, 2, 2, 2), 0.2, 0,
          attrs={"kernel_shape": [2, 2], "strides": [2, 2]}), "keeps its input's quantisation"),
    (Case("QLinearSoftmax", [(1, 10)], [0.1], [0], (1, 10), 1 / 255, -128, attrs={"axis": -1, "opset": 13}),
     "scale 1/256"),
    (Case("QLinearSoftmax", [(1, 10)], [0.1], [0], (1, 10), 1 / 256, 0, attrs={"axis": -1, "opset": 13}),
     "zero point -128"),
    (Case("QLinearAdd", [(4,), (4,)], [0.5, 0.5], [0, 0], (4,), 2.0**-20, 0), "TFLite would refuse"),
])
def test_refused_where_tflite_has_no_kernel(case: Case, reason: str, generic_c_host: PluginHost,
                                            tmp_path: Path) -> None:
    assert any(reason in refusal for refusal in _refusals(case, tmp_path, generic_c_host))
