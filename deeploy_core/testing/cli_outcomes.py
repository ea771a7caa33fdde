"""Run ``deeploy-core`` in-process and keep everything one invocation left behind.

A test of a command-line option compares what two invocations produce, and
the three compiling commands leave it in different places: ``compile`` in its
output folder, ``validate`` in its build folder, ``analyze`` on standard
output (``--json``).  :class:`CliOutcome` holds the report, the files and the
printed text side by side, so one check can judge any of the three commands.

:class:`CliLab` runs each distinct invocation once: the option tests of a
module share their baselines (the same model compiled without the option),
and click's in-process runner is many times faster than a subprocess.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from click.testing import CliRunner

from deeploy_core.testing.folders import folder_files

COMPILING_COMMANDS = ("compile", "validate", "analyze")
"""The commands that take a model and the compile options."""


@dataclass(frozen=True)
class CliOutcome:
    """What one ``deeploy-core`` invocation printed, returned and wrote."""

    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    report: dict[str, Any] | None = field(default=None, repr=False)
    """report.json of the compile (``analyze``: its ``--json`` print); None when the command failed."""
    files: dict[str, bytes] = field(default_factory=dict, repr=False)
    """The generated files by name (``compile``: the output folder, ``validate``: the build folder)."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def text(self, name: str) -> str | None:
        """A written file as text, or None when this command wrote no such file (``analyze`` writes none)."""
        return self.files[name].decode("utf-8") if name in self.files else None

    @property
    def error_lines(self) -> list[str]:
        """The non-empty lines on stderr that start with ``error:``."""
        return [line for line in self.stderr.splitlines() if line.startswith("error:")]

    def describe(self) -> str:
        """The invocation and its streams, for assertion messages."""
        return f"deeploy-core {' '.join(self.args)} -> exit {self.exit_code}\n{self.stdout}\n{self.stderr}"


class CliLab:
    """Invokes the command group with a fixed environment; :meth:`run` remembers every compiling run.

    ``root`` receives one folder per compile or validate run; ``environ``
    (e.g. ``DEEPLOY_CORE_PLUGINS``, ``CFLAGS``) is set for every invocation.
    """

    def __init__(self, root: Path, environ: Mapping[str, str]) -> None:
        self.root = root
        self.environ = dict(environ)
        self._runs: dict[tuple[str, ...], CliOutcome] = {}

    def invoke(self, args: Sequence[str], environ: Mapping[str, str] | None = None) -> CliOutcome:
        """One invocation as given (group options first), never cached."""
        from deeploy_core.cli.app import cli

        result = CliRunner().invoke(cli, [str(arg) for arg in args], env={**self.environ, **(environ or {})})
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception  # a traceback is a bug of the command, not an outcome to compare
        return CliOutcome(tuple(str(arg) for arg in args), result.exit_code, result.stdout, result.stderr)

    def run(self, command: str, model: Path, *options: str, environ: Mapping[str, str] | None = None) -> CliOutcome:
        """``command MODEL OPTIONS`` with the place its results go added (``-o``, ``--build-dir`` or ``--json``)."""
        if command not in COMPILING_COMMANDS:
            raise ValueError(f"{command!r} is not one of {COMPILING_COMMANDS}")
        key = (command, str(model), *options, *sorted(f"{k}={v}" for k, v in (environ or {}).items()))
        if key not in self._runs:
            self._runs[key] = self._run(command, model, options, environ)
        return self._runs[key]

    def _run(self, command: str, model: Path, options: Sequence[str], environ: Mapping[str, str] | None) -> CliOutcome:
        folder = self.root / f"run-{len(self._runs)}"
        where = {"compile": ["-o", str(folder)], "validate": ["--build-dir", str(folder)], "analyze": ["--json"]}
        outcome = self.invoke([command, str(model), *options, *where[command]], environ)
        if command == "analyze":
            report = json.loads(outcome.stdout) if outcome.ok else None
            return CliOutcome(outcome.args, outcome.exit_code, outcome.stdout, outcome.stderr, report)
        files = folder_files(folder)
        report = json.loads(files["report.json"]) if "report.json" in files and outcome.exit_code in (0, 1) else None
        return CliOutcome(outcome.args, outcome.exit_code, outcome.stdout, outcome.stderr, report, files)
