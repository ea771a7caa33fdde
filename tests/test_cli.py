"""The command line in-process: listing formats, reserved commands, one-line errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from deeploy_core.cli import cli


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_plugins_json_lists_builtins_only_with_all(runner: CliRunner) -> None:
    plain = runner.invoke(cli, ["plugins", "--json"])
    assert plain.exit_code == 0 and json.loads(plain.stdout) == []
    everything = runner.invoke(cli, ["plugins", "--json", "--all"])
    [builtin] = json.loads(everything.stdout)
    assert builtin["name"] == "deeploy_core.builtin" and builtin["extensions"] == {"allocator": ["first-fit"]}


def test_plugins_table(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["plugins", "--all"])
    assert result.exit_code == 0
    assert "deeploy_core.builtin" in result.stdout and "first-fit" in result.stdout and "ok" in result.stdout


def test_plugins_table_without_plugins_says_so(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["plugins"])
    assert result.stdout.strip() == "No plugins installed. (--all also lists the built-ins)"


@pytest.mark.parametrize("command", ["compile", "validate", "analyze", "supported-ops"])
def test_reserved_commands_fail_with_one_line(runner: CliRunner, command: str) -> None:
    result = runner.invoke(cli, [command, "model.onnx", "--platform", "x"])
    assert result.exit_code == 2
    assert result.stderr == f"error: '{command}' is not available in this version of deeploy-core\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_unknown_command_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["frobnicate"])
    assert result.exit_code == 2 and "No such command" in result.stderr
