"""Every ``report.json`` a test session writes matches the published schema (pytest side; needs jsonschema).

A schema that only its own unit test reads drifts from what the compiler
writes.  So a session with the ini option ``deeploy_core_check_reports = true`` (declared
by :mod:`deeploy_core.testing.pytest_plugin`; this repository's
``pyproject.toml`` sets it) checks the reports its tests actually produce, two
ways:

* in-process: :meth:`GeneratedNetwork.write <deeploy_core.network.GeneratedNetwork.write>`
  is wrapped, and each ``report.json`` it writes is validated as written; a
  report that does not match fails the test that wrote it (an error at its
  teardown, naming the file and each violation), whatever the test itself
  asserts;
* afterwards: when the session finishes, every ``report.json`` under the
  session's base temporary folder is validated too — those written by
  ``deeploy-core`` subprocesses (the docs' sessions, isolated installs) never
  pass through the wrapper.  A mismatch there is listed in the terminal summary
  and turns the exit status into "tests failed".  With pytest-xdist the
  controller scans, after every worker has finished (the workers' folders lie
  inside its own).

A test that writes a report that must not match (to show the check works)
removes it before the session ends.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

REPORT_NAME = "report.json"
"""The file name the final scan looks for (a report kept under another name is not checked)."""


def schema_violations(report: Any) -> list[str]:
    """One line per place where ``report`` breaks the schema (``path: message``), in document order; [] if none."""
    errors = sorted(_validator().iter_errors(report), key=lambda error: [str(part) for part in error.absolute_path])
    return [f"{'/'.join(str(part) for part in error.absolute_path) or '(top)'}: {error.message}" for error in errors]


def file_violations(path: Path) -> list[str]:
    """The violations of the report in file ``path`` (a file that is no JSON is one violation)."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return [f"(file): not readable as JSON: {error}"]
    return schema_violations(report)


@functools.lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    """One validator for the session (the schema itself checked once, first)."""
    from jsonschema import Draft202012Validator

    from deeploy_core.report.schema import report_schema

    schema = report_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


class ReportSchemaCheck:
    """The pytest plugin object that does the checking (registered by :func:`register`)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.problems: list[str] = []
        """One block per report that broke the schema: its path, then its violations."""
        self.reported = 0
        """How many of :attr:`problems` were already turned into a failure."""
        self.checked: set[tuple[str, int, int]] = set()
        """(path, size, mtime) of the files already validated, so the final scan skips them."""
        self._restore: Callable[[], None] | None = None
        self._summary: list[str] = []
        """What the final scan found, for the terminal summary."""

    # -- the two ways in --------------------------------------------------------------------------------------------

    def install(self) -> None:
        """Wrap ``GeneratedNetwork.write`` so that each report it writes is validated."""
        from deeploy_core.codegen.generated_network import GeneratedNetwork

        original = GeneratedNetwork.write
        check = self

        @functools.wraps(original)
        def write(network: GeneratedNetwork, *args: Any, **kwargs: Any) -> Any:
            written = original(network, *args, **kwargs)
            for path in written:
                if Path(path).name == REPORT_NAME:
                    check.check_file(Path(path))
            return written

        setattr(GeneratedNetwork, "write", write)  # the class, so every instance anywhere in the session

        def restore() -> None:
            setattr(GeneratedNetwork, "write", original)

        self._restore = restore

    def check_file(self, path: Path) -> None:
        """Validate one report file and remember what it broke."""
        try:
            status = path.stat()
        except OSError:
            return
        key = (str(path.resolve()), status.st_size, status.st_mtime_ns)
        if key in self.checked:
            return
        self.checked.add(key)
        violations = file_violations(path)
        if violations:
            shown = violations[:20] + ([f"... and {len(violations) - 20} more"] if len(violations) > 20 else [])
            self.problems.append("\n".join([f"{path} does not match the report schema:",
                                            *(f"  {line}" for line in shown)]))

    # -- pytest hooks -------------------------------------------------------------------------------------------------

    @pytest.fixture(autouse=True)
    def _deeploy_core_report_schema(self) -> Iterator[None]:
        """After each test: fail it if a report written during it (or its fixtures' setup) broke the schema."""
        yield
        fresh = self.problems[self.reported:]
        self.reported = len(self.problems)
        if fresh:
            pytest.fail("\n".join(fresh), pytrace=False)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        base = self._base_temp()
        if base is not None and not hasattr(session.config, "workerinput"):  # xdist workers: the controller scans
            for path in sorted(base.rglob(REPORT_NAME)):
                if path.is_file():
                    self.check_file(path)
        left = self.problems[self.reported:]
        self.reported = len(self.problems)
        if left:
            self._summary = left
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        left = self._summary
        if left:
            terminalreporter.section("report.json files that do not match the report schema", red=True)
            for block in left:
                terminalreporter.line(block)

    def pytest_unconfigure(self) -> None:
        if self._restore is not None:
            self._restore()
            self._restore = None

    def _base_temp(self) -> Path | None:
        """The session's base temporary folder (None when the session made none)."""
        factory = getattr(self.config, "_tmp_path_factory", None)
        if factory is None:
            return None
        try:
            return Path(factory.getbasetemp())
        except OSError:
            return None


def register(config: pytest.Config, option: str) -> None:
    """Turn the check on for this session (the ini option ``option`` asked for it; without jsonschema, that is a
    usage error in one line rather than a failure of every test)."""
    try:
        import jsonschema  # noqa: F401 - only to say early, in one line, what is missing
    except ImportError:
        raise pytest.UsageError(f"{option} = true needs jsonschema: pip install 'deeploy-core[test]'") from None
    check = ReportSchemaCheck(config)
    check.install()
    config.pluginmanager.register(check, "deeploy-core-report-schema")
