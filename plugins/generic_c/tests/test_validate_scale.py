"""``validate`` judges float outputs relative to their scale and warns when a reference is too small to judge.

An all-zero reference (a Relu of a large negative bias, as random-weight
exports produce) passes any result within ``atol``; the CLI must say so on
stderr instead of a plain "ok", and every output reports its cosine and its
error in units of the reference's max |value|.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.validate import compare_output


def _relu_of_bias(path: Path, bias: float) -> Path:
    """``y = Relu(x + bias)`` on standard-normal inputs: all zeros for a bias of -100."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
        "relu_of_bias",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
        [numpy_helper.from_array(np.full((1, 16), bias, np.float32), "b")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _validate(model: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c", "COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "deeploy_core", "validate", "--quiet", str(model)],
                          capture_output=True, text=True, env=env)


def test_all_zero_float_output_warns_and_names_the_output(tmp_path: Path) -> None:
    result = _validate(_relu_of_bias(tmp_path / "zeros.onnx", -100.0))
    assert result.returncode == 0, result.stdout + result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result.stderr
    assert "'y'" in warnings[0] and "all zeros" in warnings[0]
    assert "too small to judge" in result.stdout


def test_normal_float_output_reports_cosine_one_and_relative_error_without_warning(tmp_path: Path) -> None:
    result = _validate(_relu_of_bias(tmp_path / "normal.onnx", 0.5))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning:" not in result.stderr
    assert "max rel error" in result.stdout and "1.000000" in result.stdout
    assert "too small" not in result.stdout


def test_scale_and_relative_error_are_in_the_comparison() -> None:
    want = np.array([0.0, -2.0, 4.0], np.float32)
    comparison = compare_output("y", want + np.array([0.0, 0.0, 0.002], np.float32), want, atol=0.01, rtol=0.0)
    assert comparison.ok and not comparison.too_small and comparison.scale == 4.0
    assert comparison.max_relative_error is not None and abs(comparison.max_relative_error - 0.0005) < 1e-6
    assert comparison.cosine > 0.999999 and comparison.warning is None


def test_tiny_float_reference_below_ten_atol_is_too_small_yet_keeps_its_verdict() -> None:
    want = np.array([1e-5, -3e-5], np.float32)
    wrong = compare_output("y", -want, want, atol=1e-4, rtol=0.0)
    assert wrong.ok and wrong.too_small and wrong.cosine < -0.99
    assert wrong.warning is not None and "3e-05" in wrong.warning


def test_integer_outputs_stay_exact_and_are_never_flagged() -> None:
    zeros = np.zeros(8, np.int8)
    same = compare_output("q", zeros, zeros, atol=1e-4, rtol=0.0)
    assert same.ok and not same.too_small and same.warning is None
    off = compare_output("q", zeros + np.int8(1), zeros, atol=0.0, rtol=0.0)
    assert not off.ok and off.mismatches == 8 and not off.too_small
