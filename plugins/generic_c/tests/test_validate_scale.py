"""``validate`` judges float outputs relative to their scale, and a reference too small to judge fails.

An all-zero reference (a Relu of a large negative bias, as random-weight
exports produce) has no scale: by default it fails with one line on stderr
naming the output; with an explicit ``--atol`` the absolute rule applies and
passes it, with a warning instead of a plain "ok".  Every output reports its
cosine and its error in units of the reference's max |value|.
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


def _validate(model: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c", "COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "deeploy_core", "validate", "--quiet", str(model), *extra],
                          capture_output=True, text=True, env=env)


def test_all_zero_float_output_fails_as_too_small_to_judge_and_names_the_output(tmp_path: Path) -> None:
    result = _validate(_relu_of_bias(tmp_path / "zeros.onnx", -100.0))
    assert result.returncode == 1, result.stdout + result.stderr
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "'y'" in error and "all zeros" in error and "too small to judge" in error and "--atol" in error
    assert "TOO SMALL TO JUDGE" in result.stdout


def test_all_zero_float_output_passes_an_explicit_atol_with_a_warning(tmp_path: Path) -> None:
    result = _validate(_relu_of_bias(tmp_path / "zeros.onnx", -100.0), "--atol", "1e-4")
    assert result.returncode == 0, result.stdout + result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result.stderr
    assert "'y'" in warnings[0] and "all zeros" in warnings[0]
    assert "ok (see warning)" in result.stdout


def test_normal_float_output_reports_cosine_one_and_relative_error_without_warning(tmp_path: Path) -> None:
    result = _validate(_relu_of_bias(tmp_path / "normal.onnx", 0.5))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning:" not in result.stderr and "error:" not in result.stderr
    assert "max rel error" in result.stdout and "1.000000" in result.stdout
    assert "TOO SMALL" not in result.stdout and "rel <= 0.0001, cosine >= 0.9999" in result.stdout


def test_scale_and_relative_error_are_in_the_comparison() -> None:
    want = np.array([0.0, -2.0, 4.0], np.float32)
    comparison = compare_output("y", want + np.array([0.0, 0.0, 0.002], np.float32), want, atol=0.01, rtol=0.0)
    assert comparison.ok and not comparison.too_small and comparison.scale == 4.0
    assert comparison.max_relative_error is not None and abs(comparison.max_relative_error - 0.0005) < 1e-6
    assert comparison.cosine > 0.999999 and comparison.warning is None
    by_scale = compare_output("y", want + np.array([0.0, 0.0, 0.002], np.float32), want)
    assert not by_scale.ok and by_scale.mismatches == 1 and by_scale.rule.kind == "scale"
    assert by_scale.failure is not None and "0.0005 x max |reference| (4)" in by_scale.failure


def test_tiny_float_reference_is_judged_by_scale_unless_atol_is_given() -> None:
    want = np.array([1e-5, -3e-5], np.float32)
    wrong = compare_output("y", -want, want)
    assert not wrong.ok and not wrong.too_small and wrong.cosine < -0.99
    assert compare_output("y", want * np.float32(1 + 1e-6), want).ok
    by_atol = compare_output("y", -want, want, atol=1e-4, rtol=0.0)
    assert by_atol.ok and by_atol.too_small
    assert by_atol.warning is not None and "3e-05" in by_atol.warning


def test_subnormal_float_reference_is_too_small_to_judge() -> None:
    want = np.array([1e-40, -2e-40], np.float32)
    comparison = compare_output("y", want, want)
    assert not comparison.ok and comparison.too_small and comparison.status == "TOO SMALL TO JUDGE"
    assert comparison.failure is not None and "subnormal" in comparison.failure
    assert compare_output("y", np.zeros(0, np.float32), np.zeros(0, np.float32)).ok, "nothing to judge, nothing wrong"


def test_nan_and_infinity_match_only_themselves() -> None:
    want = np.array([1.0, np.nan, np.inf, -2.0], np.float32)
    assert compare_output("y", want.copy(), want).ok
    stray = want.copy()
    stray[0] = np.nan
    comparison = compare_output("y", stray, want)
    assert not comparison.ok and comparison.non_finite == 1 and comparison.mismatches == 1
    assert comparison.failure is not None and "NaN or infinite" in comparison.failure
    missing = want.copy()
    missing[1] = 0.0
    assert not compare_output("y", missing, want, atol=1e9).ok


def test_integer_outputs_stay_exact_and_are_never_flagged() -> None:
    zeros = np.zeros(8, np.int8)
    same = compare_output("q", zeros, zeros, atol=1e-4, rtol=0.0)
    assert same.ok and not same.too_small and same.warning is None
    assert compare_output("q", zeros, zeros).ok, "an all-zero integer output is judged exactly, not by scale"
    off = compare_output("q", zeros + np.int8(1), zeros, atol=0.0, rtol=0.0)
    assert not off.ok and off.mismatches == 8 and not off.too_small
    by_default = compare_output("q", zeros + np.int8(1), zeros)
    assert not by_default.ok and by_default.rule.kind == "exact"
