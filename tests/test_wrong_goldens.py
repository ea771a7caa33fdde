"""A wrong golden never passes: neither ``validate`` nor the output folder's ``make test`` (issue 29, part 3).

An absolute tolerance passed a sign-flipped golden whose values were around
1e-6 and failed a correct one around 1e6 on rounding noise.  Here every kind
of wrong golden — sign-flipped, all zeros, scaled by 2, permuted, one NaN,
and for integer outputs one LSB off — is fed to both judges at three scales
of a float network (a MatMul whose weights put its outputs near 1e-6, 1 and
1e6) and to an integer network (MatMulInteger, int32 outputs): ``validate``
must exit 1 with a line saying why, and ``make test`` of a folder compiled
with that golden must exit non-zero.  The correct golden passes both at every
scale.  An explicit ``--atol`` switches to the absolute rule, which is the
user's call: the all-zero golden of a tiny network then passes, with a
warning from ``validate``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.testing.cli_outcomes import CliLab, CliOutcome
from deeploy_core.validate.reference import run_reference

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")

STRICT_CFLAGS = "-O1 -std=c99 -Wall -Wextra -Werror -Wdouble-promotion -Wshadow -pedantic"
"""The self-test must build silently, no float promoted to double behind the reader's back."""

SCALES = {"tiny": 1e-6, "normal": 1.0, "huge": 1e6}


def _permuted(golden: np.ndarray) -> np.ndarray:
    """The same values, each moved one place on (a random output has no two neighbours equal)."""
    return np.roll(golden.reshape(-1), 1).reshape(golden.shape)


def _one_nan(golden: np.ndarray) -> np.ndarray:
    wrong = golden.astype(np.float64)
    wrong.flat[3] = np.nan
    return wrong


def _one_lsb_off(golden: np.ndarray) -> np.ndarray:
    wrong = golden.copy()
    wrong.flat[5] += 1
    return wrong


WRONG: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sign-flipped": lambda golden: -golden,
    "all-zeros": np.zeros_like,
    "doubled": lambda golden: golden * 2,
    "permuted": _permuted,
    "one-NaN": _one_nan,
}
WRONG_INTEGER: dict[str, Callable[[np.ndarray], np.ndarray]] = {**WRONG, "one-LSB-off": _one_lsb_off}

FLOAT_REASONS = {"sign-flipped": "x max |reference|", "all-zeros": "too small to judge", "doubled": "x max |reference|",
                 "permuted": "x max |reference|", "one-NaN": "NaN or infinite"}
"""What validate's error line says for each wrong float golden."""

INTEGER_REASONS = {**{kind: "integer values differ" for kind in WRONG_INTEGER}, "one-NaN": "NaN or infinite"}


@dataclass(frozen=True)
class Network:
    """A model with its sample inputs and the golden ONNX Runtime computes for them."""

    model: Path
    inputs: Path
    golden: np.ndarray

    def write_golden(self, folder: Path, name: str, values: np.ndarray) -> Path:
        path = folder / f"{name}.npz"
        np.savez(path, y=values)
        return path


def _float_matmul(folder: Path, scale: float) -> Network:
    """y = x @ W with standard-normal x and W scaled so that y is about ``scale``."""
    rng = np.random.default_rng(29)
    weights = (rng.standard_normal((16, 8)) * scale / 4).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
                              [numpy_helper.from_array(weights, "w")])
    return _network(folder, graph, rng.standard_normal((1, 16)).astype(np.float32))


def _integer_matmul(folder: Path) -> Network:
    """MatMulInteger of int8 data and int8 weights: int32 outputs, judged exactly."""
    rng = np.random.default_rng(30)
    weights = rng.integers(-128, 128, (16, 8), dtype=np.int8)
    graph = helper.make_graph([helper.make_node("MatMulInteger", ["x", "w"], ["y"])], "matmul_integer",
                              [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 8])],
                              [numpy_helper.from_array(weights, "w")])
    return _network(folder, graph, rng.integers(-128, 128, (1, 16), dtype=np.int8))


def _network(folder: Path, graph: onnx.GraphProto, data: np.ndarray) -> Network:
    folder.mkdir(parents=True)
    model = folder / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    inputs = folder / "inputs.npz"
    np.savez(inputs, x=data)
    [golden] = run_reference(model, {"x": data})
    return Network(model, inputs, golden)


@pytest.fixture(scope="module")
def networks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Network]:
    root = tmp_path_factory.mktemp("wrong-goldens")
    made = {name: _float_matmul(root / name, scale) for name, scale in SCALES.items()}
    made["integer"] = _integer_matmul(root / "integer")
    return made


def _lab(tmp_path: Path) -> CliLab:
    # No slow-plugin warning on a loaded machine: the tests count stderr's lines.
    return CliLab(tmp_path / "runs", {"DEEPLOY_CORE_PLUGINS": "generic-c", "COLUMNS": "250",
                                      "DEEPLOY_CORE_SLOW_PLUGIN_SECONDS": "inf"})


def _validate(tmp_path: Path, network: Network, golden: Path, *extra: str) -> CliOutcome:
    return _lab(tmp_path).invoke(["validate", str(network.model), "--quiet", "--inputs", str(network.inputs),
                                  "--outputs", str(golden), *extra])


def _make_test(tmp_path: Path, network: Network, golden: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``compile --inputs --outputs golden`` into a fresh folder, then ``make test`` there with strict flags."""
    folder = tmp_path / "out"
    compiled = _lab(tmp_path).invoke(["compile", str(network.model), "--quiet", "--inputs", str(network.inputs),
                                      "--outputs", str(golden), "-o", str(folder), "--force", *extra])
    assert compiled.ok, compiled.describe()
    environment = {name: value for name, value in os.environ.items() if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "-C", str(folder), "test", f"CFLAGS={STRICT_CFLAGS}"], capture_output=True,
                          text=True, env=environment, timeout=300)


def _assert_fails(network: Network, kind: str, reason: str, tmp_path: Path) -> None:
    values = WRONG_INTEGER[kind](network.golden)
    assert not np.array_equal(values, network.golden, equal_nan=False)
    golden = network.write_golden(tmp_path, kind, values)
    validated = _validate(tmp_path, network, golden)
    assert validated.exit_code == 1, validated.describe()
    assert "MISMATCH" in validated.stdout or "TOO SMALL TO JUDGE" in validated.stdout, validated.describe()
    [line] = validated.error_lines
    assert line.startswith("error: output 'y': ") and reason in line, validated.describe()
    built = _make_test(tmp_path, network, golden)
    assert built.returncode != 0, built.stdout + built.stderr
    verdict = "TOO SMALL TO JUDGE" if reason == "too small to judge" else "MISMATCH"
    assert f": {verdict}" in built.stdout and "self-test FAILED" in built.stdout, built.stdout + built.stderr


@pytest.mark.parametrize("kind", sorted(WRONG))
@pytest.mark.parametrize("scale", sorted(SCALES))
def test_a_wrong_float_golden_fails_validate_and_make_test(networks: dict[str, Network], scale: str, kind: str,
                                                            tmp_path: Path) -> None:
    _assert_fails(networks[scale], kind, FLOAT_REASONS[kind], tmp_path)


@pytest.mark.parametrize("kind", sorted(WRONG_INTEGER))
def test_a_wrong_integer_golden_fails_validate_and_make_test(networks: dict[str, Network], kind: str,
                                                              tmp_path: Path) -> None:
    _assert_fails(networks["integer"], kind, INTEGER_REASONS[kind], tmp_path)


@pytest.mark.parametrize("name", [*sorted(SCALES), "integer"])
def test_the_correct_golden_passes_validate_and_make_test(networks: dict[str, Network], name: str,
                                                          tmp_path: Path) -> None:
    network = networks[name]
    golden = network.write_golden(tmp_path, "golden", network.golden)
    validated = _validate(tmp_path, network, golden)
    assert validated.ok and validated.stderr == "", validated.describe()
    rule = "exact" if name == "integer" else "rel <= 0.0001, cosine >= 0.9999"
    assert rule in validated.stdout, validated.describe()
    built = _make_test(tmp_path, network, golden)
    assert built.returncode == 0 and "self-test passed" in built.stdout, built.stdout + built.stderr
    assert ": ok" in built.stdout and "cosine 1.000000000" in built.stdout, built.stdout


def test_an_explicit_atol_judges_by_absolute_error_with_a_warning(networks: dict[str, Network],
                                                                  tmp_path: Path) -> None:
    """The user's --atol is the rule: the zeros of a network near 1e-6 pass it (validate warns), a sign flip of
    the same network fails a tighter one, and so does its self-test."""
    network = networks["tiny"]
    zeros = network.write_golden(tmp_path, "zeros", np.zeros_like(network.golden))
    loose = _validate(tmp_path, network, zeros, "--atol", "1e-4")
    assert loose.ok, loose.describe()
    [warning] = [line for line in loose.stderr.splitlines() if line.startswith("warning:")]
    assert "'y'" in warning and "all zeros" in warning and "below 10 x atol" in warning
    assert _make_test(tmp_path, network, zeros, "--atol", "1e-4").returncode == 0
    flipped = network.write_golden(tmp_path, "flipped", -network.golden)
    tight = _validate(tmp_path, network, flipped, "--atol", "1e-8")
    assert tight.exit_code == 1 and "values outside |error| <= 1e-08" in tight.error_lines[0], tight.describe()
    built = _make_test(tmp_path, network, flipped, "--atol", "1e-8")
    assert built.returncode != 0 and "MISMATCH" in built.stdout, built.stdout


def test_compile_warns_that_an_all_zero_golden_cannot_be_judged(networks: dict[str, Network], tmp_path: Path) -> None:
    network = networks["normal"]
    zeros = network.write_golden(tmp_path, "zeros", np.zeros_like(network.golden))
    compiled = _lab(tmp_path).invoke(["compile", str(network.model), "--quiet", "--inputs", str(network.inputs),
                                      "--outputs", str(zeros), "-o", str(tmp_path / "out")])
    assert compiled.ok, compiled.describe()
    [warning] = [line for line in compiled.stderr.splitlines() if line.startswith("warning:")]
    assert "output 'y'" in warning and "all zeros" in warning and "--atol" in warning
