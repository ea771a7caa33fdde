"""``examples/operator-plugin`` installed for real from its own pyproject.toml, then used through the command line.

A fresh venv holds the core, the two platforms and the example (nothing else of
deeploy), so the test proves what a user sees after ``pip install``: the
plugin loads, ``supported-ops`` lists ``Mish`` from it, and a Mish network
compiles and validates on both platforms; with the plugin switched off the
same command gives the unsupported-op report.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.plugins.timing import SLOW_PLUGIN_VARIABLE
from deeploy_core.testing.isolated_install import isolated_venv

REPO = Path(__file__).resolve().parent.parent
PROJECTS = [REPO, REPO / "plugins" / "generic_c", REPO / "plugins" / "pulp_cluster",
            REPO / "examples" / "operator-plugin"]
PLATFORM_OPTIONS = {
    "generic-c": (),
    "pulp-cluster": ("--l1", "2048", "--buffering", "double", "--cores", "8"),
}


@pytest.fixture(scope="module")
def example_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return isolated_venv(tmp_path_factory.mktemp("operator-plugin-venv"), PROJECTS)


@pytest.fixture(scope="module")
def mish_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Conv-free but not trivial: Mish between two Adds, so its buffers sit in the arena and in tiles."""
    bias = helper.make_tensor("b", TensorProto.FLOAT, [1], [0.5])
    nodes = [helper.make_node("Add", ["x", "b"], ["s"], name="shift"),
             helper.make_node("Mish", ["s"], ["m"], name="mish"),
             helper.make_node("Add", ["m", "m"], ["y"], name="double")]
    shape = [1, 8, 12, 12]
    graph = helper.make_graph(nodes, "mish_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], [bias])
    path = tmp_path_factory.mktemp("mish-model") / "mish_net.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def run_cli(python: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "DEEPLOY_CORE_PLUGINS"}
    env.update({SLOW_PLUGIN_VARIABLE: "inf", "COLUMNS": "200"})
    return subprocess.run([str(python), "-m", "deeploy_core", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=900)


def test_the_installed_example_loads_ok_and_supported_ops_lists_mish_from_it(example_python: Path) -> None:
    listed = run_cli(example_python, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    mish = next(entry for entry in json.loads(listed.stdout) if entry["name"] == "mish")
    assert (mish["distribution"], mish["status"], mish["error"], mish["notes"]) == (
        "deeploy-example-mish", "ok", None, [])
    assert mish["extensions"] == {"operator": ["generic-c.mish", "pulp-cluster.mish"]}
    for platform in PLATFORM_OPTIONS:
        table = run_cli(example_python, "supported-ops", "--platform", platform, "--json")
        assert table.returncode == 0, table.stderr
        rows = [row for row in json.loads(table.stdout) if row["op"] == "Mish"]
        assert [(row["kernel"], row["signature"], row["source"]) for row in rows] == [
            ("Mish float32 (deeploy-example-mish)", "float32 -> float32", "plugin mish")]


@pytest.mark.parametrize("platform", sorted(PLATFORM_OPTIONS))
def test_a_mish_network_runs_the_plugins_kernel_and_without_it_mishs_function_body(
        platform: str, example_python: Path, mish_model: Path, tmp_path: Path) -> None:
    options = ("--platform", platform, *PLATFORM_OPTIONS[platform])
    validated = run_cli(example_python, "validate", str(mish_model), *options, "--quiet")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "MISMATCH" not in validated.stdout and "0/1152" in validated.stdout
    compiled = run_cli(example_python, "compile", str(mish_model), *options, "-o", "out", "--quiet", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    assert "dcx_mish_f32(" in (tmp_path / "out" / "Network.c").read_text(encoding="utf-8")
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert [layer["kernel"] for layer in report["layers"] if layer["op"] == "Mish"] == [
        "Mish float32 (deeploy-example-mish)"]
    # Without the plugin no kernel takes Mish, so the core expands it into its ONNX function body
    # (Softplus, Tanh, Mul): it still validates, with the platform's own kernels and no call of the plugin's.
    expanded = run_cli(example_python, "--disable-plugin", "mish", "compile", str(mish_model), *options, "-o",
                       "expanded", "--quiet", cwd=tmp_path)
    assert expanded.returncode == 0, expanded.stderr
    assert "dcx_mish_f32(" not in (tmp_path / "expanded" / "Network.c").read_text(encoding="utf-8")
    layers = json.loads((tmp_path / "expanded" / "report.json").read_text(encoding="utf-8"))["layers"]
    assert "Mish" not in {layer["op"] for layer in layers} and {"Softplus", "Tanh"} <= {layer["op"] for layer in layers}
    assert "Traceback" not in expanded.stderr
