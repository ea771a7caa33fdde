"""report.json: its published schema, snake_case keys, provenance and byte-identical recompiles (issue 20 item 5).

Every report the suite writes is validated against the schema by
:mod:`deeploy_core.testing.report_schema` (the ini option in pyproject.toml);
the tests here check the schema itself, the command that prints it, the
mechanism (a broken report must fail a run), what the provenance says, and
that reports written before the key rename are still reused by
``--tiling-from``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

import onnx
import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from deeploy_core.report.migration import REQUANTIZATION_RENAMES, TOP_LEVEL_RENAMES, upgrade_report
from deeploy_core.report.schema import DIALECT, SCHEMA_FILE, report_schema, report_schema_text
from deeploy_core.testing.models import conformance_model
from tests.support.option_models import qdq_conv
from deeploy_core.testing.report_schema import schema_violations

REPO = Path(__file__).resolve().parent.parent
REPORT_PAGE = REPO / "docs" / "report.rst"
PLUGINS = "generic-c,pulp-cluster,mish"
ENVIRON = {"DEEPLOY_CORE_PLUGINS": PLUGINS, "COLUMNS": "200"}
TILED = ("--l1", "16000", "--buffering", "double")
SNAKE_CASE = re.compile(r"^[a-z][a-z0-9_]*$")


def compile_folder(model: Path, out: Path, *options: str) -> dict[str, Any]:
    """``deeploy-core compile MODEL -o OUT OPTIONS`` in-process; the report it wrote."""
    from deeploy_core.cli.app import cli

    result = CliRunner().invoke(cli, ["compile", str(model), "-o", str(out), "-q", *options], env=ENVIRON)
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"
    report: dict[str, Any] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return report


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("report-schema-models")
    paths = {"cnn": folder / "cnn.onnx", "qdq": folder / "qdq.onnx", "mish": folder / "mish.onnx",
             "qdq_islands": folder / "qdq_islands.onnx"}
    onnx.save(conformance_model("cnn"), paths["cnn"])
    onnx.save(qdq_conv(), paths["qdq"])
    onnx.save(_qdq_islands_model(), paths["qdq_islands"])
    onnx.save(_mish_model(), paths["mish"])
    return paths


def _mish_model() -> onnx.ModelProto:
    """Add → Mish (the example operator plugin's op) → Add."""
    from onnx import TensorProto, helper

    shape = [1, 4, 6, 6]
    nodes = [helper.make_node("Add", ["x", "b"], ["s"], name="shift"),
             helper.make_node("Mish", ["s"], ["m"], name="mish"),
             helper.make_node("Add", ["m", "m"], ["y"], name="double")]
    graph = helper.make_graph(nodes, "mish_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                              [helper.make_tensor("b", TensorProto.FLOAT, [1], [0.5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="report-test",
                              producer_version="7.1")
    return model


def _qdq_islands_model() -> onnx.ModelProto:
    """int8 a + b → 2×2 average pool → Softmax (output step 1/256 from -128): the islands whose fused kernels describe
    their own parameters (TFLite's Add, average pool and Softmax in fixed-point mode, float32 ones in exact mode)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    def parameters(name: str, scale: float, zero: int) -> list[onnx.TensorProto]:
        return [numpy_helper.from_array(np.array(scale, np.float32), f"{name}_s"),
                numpy_helper.from_array(np.array(zero, np.int8), f"{name}_z")]

    def dq(tensor: str, name: str) -> onnx.NodeProto:
        return helper.make_node("DequantizeLinear", [tensor, f"{name}_s", f"{name}_z"], [f"{tensor}_dq"])

    def q(tensor: str, name: str, output: str) -> onnx.NodeProto:
        return helper.make_node("QuantizeLinear", [tensor, f"{name}_s", f"{name}_z"], [output])

    nodes = [dq("a", "a"), dq("b", "b"), helper.make_node("Add", ["a_dq", "b_dq"], ["sum_f"]), q("sum_f", "sum", "sum"),
             dq("sum", "sum"),
             helper.make_node("AveragePool", ["sum_dq"], ["pool_f"], kernel_shape=[2, 2], strides=[2, 2]),
             q("pool_f", "sum", "pool"), dq("pool", "sum"),
             helper.make_node("Softmax", ["pool_dq"], ["soft_f"], axis=-1), q("soft_f", "soft", "y")]
    shape = [1, 2, 4, 4]
    graph = helper.make_graph(
        nodes, "qdq_islands", [helper.make_tensor_value_info(name, TensorProto.INT8, shape) for name in ("a", "b")],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 2, 2, 2])],
        [*parameters("a", 0.05, 3), *parameters("b", 0.03, -2), *parameters("sum", 0.07, 1),
         *parameters("soft", 1.0 / 256.0, -128)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# -- the schema ---------------------------------------------------------------------------------------------------


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = report_schema()
    assert schema["$schema"] == DIALECT
    Draft202012Validator.check_schema(schema)


def _property_names(node: Any) -> set[str]:
    """Every key the schema declares under ``properties``, at any depth."""
    if isinstance(node, list):
        return set().union(*(_property_names(item) for item in node))
    if not isinstance(node, dict):
        return set()
    own = set(node.get("properties", {})) if isinstance(node.get("properties"), dict) else set()
    return own.union(*(_property_names(value) for value in node.values()))


def test_every_key_the_schema_declares_is_snake_case() -> None:
    """With fixed objects closed and kernel parameters held to snake_case names, a valid report has no other key
    form outside the maps keyed by model names."""
    assert sorted(name for name in _property_names(report_schema()) if not SNAKE_CASE.match(name)) == []


def test_schema_report_prints_the_shipped_schema_and_exits_0() -> None:
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "schema", "report"], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == report_schema_text() == (REPO / "deeploy_core" / "report" / SCHEMA_FILE).read_text()
    assert json.loads(result.stdout) == report_schema()


def test_a_wheel_of_the_core_carries_the_schema(tmp_path: Path) -> None:
    """Package data, not just a file in the checkout: a wheel built from the project's files ships it."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "deeploy_core", source / "deeploy_core",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                             "--quiet", "-w", str(tmp_path / "dist"), str(source)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    [wheel] = (tmp_path / "dist").glob("deeploy_core-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(f"deeploy_core/report/{SCHEMA_FILE}").decode("utf-8") == report_schema_text()


# -- the reports the compiler writes ------------------------------------------------------------------------------


VARIANTS = {
    "generic-c untiled": ("cnn", ()),
    "generic-c tiled, L1 16000, double buffering": ("cnn", TILED),
    "pulp-cluster": ("cnn", ("--platform", "pulp-cluster")),
    "QDQ exact": ("qdq", ()),
    "QDQ fixed-point": ("qdq", ("--quantization", "fixed-point")),
    "QDQ Add, pool, Softmax exact": ("qdq_islands", ()),
    "QDQ Add, pool, Softmax fixed-point": ("qdq_islands", ("--quantization", "fixed-point")),
    "operator plugin": ("mish", ()),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_report_variant_matches_the_schema(variant: str, models: dict[str, Path], tmp_path: Path) -> None:
    model, options = VARIANTS[variant]
    report = compile_folder(models[model], tmp_path / "out", *options)
    assert schema_violations(report) == []
    if model == "qdq_islands":  # every island fused, each kernel describing its parameters in its mode's arithmetic
        arithmetic = "tflite" if options else "float32"
        assert [(layer["op"], layer["requantization"]["arithmetic"]) for layer in report["layers"]] == [
            (op, arithmetic) for op in ("QLinearAdd", "QLinearAveragePool", "QLinearSoftmax")], report["layers"]
    for old in TOP_LEVEL_RENAMES:
        assert old not in report


def test_the_schema_rejects_what_it_must(models: dict[str, Path], tmp_path: Path) -> None:
    """Old key names, a missing provenance, an unknown key and a camelCase kernel parameter each break it."""
    report = compile_folder(models["qdq"], tmp_path / "out", "--quantization", "fixed-point")
    assert any("numberOfOps" in line for line in schema_violations(_renamed_back(report)))
    assert any("provenance" in line for line in schema_violations(_renamed_back(report)))
    assert any("'extra' was unexpected" in line for line in schema_violations({**report, "extra": 1}))
    layers = [{**layer, "requantization": {**layer["requantization"], "zeroPoint": 0}} if layer["requantization"]
              else layer for layer in report["layers"]]
    assert any("zeroPoint" in line for line in schema_violations({**report, "layers": layers}))


def _renamed_back(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with its top-level keys under their names before the rename (as an old report has them)."""
    back = {new: old for old, new in TOP_LEVEL_RENAMES.items()}
    return {back.get(key, key): value for key, value in report.items() if key != "provenance"}


def test_requantized_add_names_its_groups_in_snake_case(tmp_path: Path) -> None:
    """RequantizedAdd's requantization has one group per input and the output's (``rqs_out``, was ``rqsOut``)."""
    from deeploy_core.api import CompileOptions, compile_model
    from deeploy_core.ir.dtypes import INT8
    from deeploy_core.plugins import PluginHost
    from deeploy_generic_c import plugin as generic_c_plugin
    from onnx import TensorProto, helper
    from tests.dialect_reference.elementwise import RequantSpec

    attributes = {**RequantSpec(mul=3, add=1, div=4).attributes("rqs1"),
                  **RequantSpec(mul=5, add=2, div=8).attributes("rqs2"),
                  **RequantSpec(mul=7, add=3, div=16).attributes("rqsOut")}
    node = helper.make_node("RequantizedAdd", ["a", "b"], ["y"], name="rqadd", **attributes)
    shape = [1, 4, 4]
    graph = helper.make_graph([node], "rqadd", [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
                                                for name in ("a", "b")],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    path = tmp_path / "rqadd.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    _, generated = compile_model(path, CompileOptions("generic-c", input_types={"a": INT8, "b": INT8}), host)
    [layer] = generated.report["layers"]
    assert sorted(layer["requantization"]) == ["rqs1", "rqs2", "rqs_out"]
    assert schema_violations(generated.report) == []


# -- provenance ---------------------------------------------------------------------------------------------------


def _expected_opsets(path: Path) -> dict[str, int]:
    model = onnx.load(str(path), load_external_data=False)
    return {entry.domain or "ai.onnx": entry.version for entry in model.opset_import}


def test_provenance_names_the_tool_every_extension_with_its_distribution_and_the_model(
        models: dict[str, Path], tmp_path: Path) -> None:
    report = compile_folder(models["cnn"], tmp_path / "out", *TILED)
    provenance = report["provenance"]
    assert provenance["tool"] == {"name": "deeploy-core", "version": metadata.version("deeploy-core")}
    model = onnx.load(str(models["cnn"]))
    assert provenance["model"] == {
        "sha256": hashlib.sha256(models["cnn"].read_bytes()).hexdigest(),
        "ir_version": model.ir_version,
        "producer_name": model.producer_name,
        "producer_version": model.producer_version,
        "opsets": _expected_opsets(models["cnn"]),
    }
    assert [(entry["kind"], entry["name"], entry["distribution"]) for entry in provenance["extensions"]] == [
        ("platform", "generic-c", "deeploy-generic-c"),
        ("memory_level", "l2-l1", "deeploy-core"),
        ("tiler", "double-buffering", "deeploy-core"),
        ("allocator", "first-fit", "deeploy-core"),
    ]
    for entry in provenance["extensions"]:
        assert entry["version"] == metadata.version(entry["distribution"])
    # every extension that took part has its resolved options too
    assert {entry["kind"] for entry in provenance["extensions"]} == set(report["options"])


def test_provenance_names_the_operator_plugin_whose_kernel_ran(models: dict[str, Path], tmp_path: Path) -> None:
    provenance = compile_folder(models["mish"], tmp_path / "out")["provenance"]
    operators = [entry for entry in provenance["extensions"] if entry["kind"] == "operator"]
    assert operators == [{"kind": "operator", "name": "generic-c.mish", "plugin": "mish",
                          "distribution": "deeploy-example-mish", "version": metadata.version("deeploy-example-mish")}]
    assert provenance["model"]["producer_name"] == "report-test" and provenance["model"]["producer_version"] == "7.1"
    assert provenance["model"]["opsets"] == {"ai.onnx": 18}


def test_two_compiles_into_two_folders_write_byte_identical_reports(models: dict[str, Path], tmp_path: Path) -> None:
    """No time, timing or path: the same model (also a copy in another folder) gives the same bytes."""
    copy = tmp_path / "elsewhere" / models["cnn"].name
    copy.parent.mkdir()
    shutil.copy(models["cnn"], copy)
    for options in ((), TILED):
        first = compile_folder(models["cnn"], tmp_path / "first" / "-".join(options), *options)
        second = compile_folder(copy, tmp_path / "second" / "-".join(options), *options)
        assert first == second
        texts = [(tmp_path / run / "-".join(options) / "report.json").read_bytes() for run in ("first", "second")]
        assert texts[0] == texts[1]
        for folder in (tmp_path, models["cnn"].parent, Path.home()):
            assert str(folder).encode() not in texts[0]


# -- reports written before the rename ----------------------------------------------------------------------------


def test_upgrade_report_renames_the_old_keys_and_keeps_new_reports() -> None:
    old = {"numberOfOps": 5, "worstCaseBufferSize": {"arena": 64}, "macs": 2,
           "layers": [{"requantization": {"rqs1": {"shift": 1}, "rqsOut": {"shift": 2}}}, {"requantization": None}]}
    assert upgrade_report(old) == {
        "number_of_ops": 5, "worst_case_buffer_size": {"arena": 64}, "macs": 2,
        "layers": [{"requantization": {"rqs1": {"shift": 1}, "rqs_out": {"shift": 2}}}, {"requantization": None}]}
    new = upgrade_report(old)
    assert upgrade_report(new) == new
    assert upgrade_report([1]) == [1]


def test_tiling_from_reuses_a_report_with_the_old_key_names(models: dict[str, Path], tmp_path: Path) -> None:
    """A tiled report rewritten as one from before the rename (old names, no provenance) reproduces the code, with
    the tiler it names (no --buffering given)."""
    first = compile_folder(models["cnn"], tmp_path / "first", *TILED)
    # Named old-report.json, not report.json: it must not match today's schema, and the session's final scan
    # validates every report.json it finds.
    old = tmp_path / "old-report.json"
    old.write_text(json.dumps(_renamed_back(first), indent=2, sort_keys=True), encoding="utf-8")
    assert "numberOfOps" in old.read_text() and "provenance" not in old.read_text()
    again = compile_folder(models["cnn"], tmp_path / "again", "--l1", "16000", "--tiling-from", str(old))
    assert again["tiling"] == first["tiling"]
    assert (tmp_path / "again" / "Network.c").read_bytes() == (tmp_path / "first" / "Network.c").read_bytes()


# -- the docs -----------------------------------------------------------------------------------------------------


def test_the_report_page_names_every_key_of_the_schema() -> None:
    page = REPORT_PAGE.read_text(encoding="utf-8")
    missing = sorted(name for name in _property_names(report_schema()) if f"``{name}``" not in page)
    assert missing == [], f"docs/report.rst does not document {missing}"


def test_the_migration_table_lists_exactly_the_renames() -> None:
    page = REPORT_PAGE.read_text(encoding="utf-8")
    table = page.split(".. migration-table-start", 1)[1].split(".. migration-table-end", 1)[0]
    rows = set(re.findall(r"^``(\S+)``\s+``(\S+)``\s*$", table, flags=re.MULTILINE))
    expected = set(TOP_LEVEL_RENAMES.items()) | {(f"layers[].requantization.{old}", f"layers[].requantization.{new}")
                                                 for old, new in REQUANTIZATION_RENAMES.items()}
    assert rows == expected


# -- the check every session runs -------------------------------------------------------------------------------------


INNER_TESTS = '''
import json
from pathlib import Path

import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.models import conformance_model
from deeploy_generic_c import plugin as generic_c_plugin


@pytest.fixture
def generated(tmp_path):
    onnx.save(conformance_model("mlp"), tmp_path / "mlp.onnx")
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return compile_model(tmp_path / "mlp.onnx", CompileOptions("generic-c"), host)[1]


def test_writes_a_valid_report(generated, tmp_path):
    generated.write(tmp_path / "out")


def test_writes_an_old_style_report(generated, tmp_path):
    generated.report["numberOfOps"] = generated.report.pop("number_of_ops")
    generated.write(tmp_path / "out")


def test_leaves_a_broken_report_on_disk(tmp_path):
    (tmp_path / "cli-out").mkdir()
    (tmp_path / "cli-out" / "report.json").write_text(json.dumps({"network": "x"}))
'''


@pytest.mark.parametrize("workers", [("-p", "no:xdist"), ("-n", "2")], ids=["one process", "xdist"])
def test_a_report_that_breaks_the_schema_fails_the_run(workers: tuple[str, str], pytester: pytest.Pytester) -> None:
    """In-process writes fail the test that wrote them; files on disk (a subprocess's) fail the session (with
    xdist: the controller's scan, after the workers)."""
    pytester.makeini("[pytest]\ndeeploy_core_check_reports = true\n")
    pytester.makepyfile(test_inner=INNER_TESTS)
    try:
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *workers)
        result.assert_outcomes(passed=3, errors=1)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        output = result.stdout.str()
        assert re.search(r"ERROR at teardown of test_writes_an_old_style_report", output)
        assert re.search(r"out/report.json does not match the report schema", output)
        assert "Additional properties are not allowed ('numberOfOps' was unexpected)" in output
        assert "report.json files that do not match the report schema" in output
        assert re.search(r"cli-out/report.json does not match the report schema", output)
        assert "'provenance' is a required property" in output
        assert "test_writes_a_valid_report" not in output.split("short test summary")[-1]
    finally:
        # the broken reports must not reach this session's own final scan
        for inner in pytester.path.glob("runpytest-*"):
            if inner.is_symlink():  # runpytest-current points at the newest
                inner.unlink()
            else:
                shutil.rmtree(inner)


def test_a_session_whose_reports_all_match_passes(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ndeeploy_core_check_reports = true\n")
    pytester.makepyfile(test_inner=INNER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-k", "valid")
    result.assert_outcomes(passed=1, deselected=2)
    assert result.ret == pytest.ExitCode.OK
