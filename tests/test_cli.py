"""The command line in-process: listing formats, reserved commands, one-line errors."""

from __future__ import annotations

import json

import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from deeploy_core.cli import cli


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_plugins_json_lists_builtins_only_with_all(runner: CliRunner) -> None:
    plain = runner.invoke(cli, ["plugins", "--json"])
    assert plain.exit_code == 0
    listed = json.loads(plain.stdout)
    assert all(not entry["builtin"] for entry in listed)
    assert all(entry["status"] == "disabled" for entry in listed), "DEEPLOY_CORE_PLUGINS is empty in core tests"
    everything = runner.invoke(cli, ["plugins", "--json", "--all"])
    [builtin] = [entry for entry in json.loads(everything.stdout) if entry["builtin"]]
    assert builtin["name"] == "deeploy_core.builtin"
    assert builtin["extensions"] == {"allocator": ["first-fit"], "memory_level": ["l2-l1"],
                                     "tiler": ["double-buffering", "single-buffering"]}


def test_plugins_table(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["plugins", "--all"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "deeploy_core.builtin" in result.stdout and "first-fit" in result.stdout and "ok" in result.stdout


def test_plugins_table_without_plugins_says_so(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("deeploy_core.plugins.host.discover_plugins", lambda: [])
    result = runner.invoke(cli, ["plugins"])
    assert result.stdout.strip() == "No plugins installed. (--all also lists the built-ins)"


@pytest.mark.parametrize("command", ["compile", "validate", "analyze"])
def test_unknown_platform_is_one_line(runner: CliRunner, command: str, tmp_path) -> None:
    model = tmp_path / "m.onnx"
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(graph), model)
    extra = ["-o", str(tmp_path / "out")] if command == "compile" else []
    result = runner.invoke(cli, [command, str(model), "--platform", "nowhere", *extra])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no platform named 'nowhere'")
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_model_file_is_one_line(runner: CliRunner, tmp_path) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(b"not onnx")
    result = runner.invoke(cli, ["validate", str(model)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "not a valid ONNX model" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unknown_command_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["frobnicate"])
    assert result.exit_code == 2 and "No such command" in result.stderr
