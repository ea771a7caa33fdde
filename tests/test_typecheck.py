"""mypy over the core and every bundled plugin, with the checked-in configuration (issue 18, item 6).

The configuration is ``[tool.mypy]`` in ``pyproject.toml`` (Python 3.10, the
packages to check, which third-party packages have no types).  The test runs
mypy through its API, so ``make test`` and CI run it with everything else;
``pytest -m "not typecheck"`` leaves it out.  Any error fails the test, and
no file is excused: :data:`EXCLUDED_FILES` is empty and stays so.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

EXCLUDED_FILES: tuple[str, ...] = ()
"""Files whose mypy errors would not fail the test.  Empty since issue 18 item 6: every file of the core and the
plugins type-checks.  Should a file ever have to be listed, for a refactor in flight, the listing is checked too: the
file must exist and must still have errors, so an entry cannot outlive its reason."""


def mypy_messages(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], str, int]:
    """mypy's message lines, its stderr and exit status for the configured files, run from the repository root."""
    try:
        from mypy import api
    except ImportError:  # the test extra installs it; a missing checker must not look like a passing check
        pytest.fail("mypy is not installed: pip install -e '.[test]'")
    monkeypatch.chdir(ROOT)  # the configuration names the packages relative to the repository root
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache_dir),
                                      "--no-error-summary", "--no-pretty"])
    return [line for line in stdout.splitlines() if line.strip()], stderr, status


def message_file(line: str) -> str:
    """The file a message line is about (``path:line: error: ...``)."""
    return line.split(":", 1)[0]


@pytest.mark.typecheck
def test_mypy_finds_no_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines, stderr, status = mypy_messages(tmp_path / "mypy-cache", monkeypatch)
    assert status in (0, 1), f"mypy could not run (status {status}):\n{stderr}"
    unexpected = [line for line in lines if message_file(line) not in EXCLUDED_FILES]
    assert not unexpected, "mypy:\n" + "\n".join(unexpected)
    errors = Counter(message_file(line) for line in lines if ": error: " in line)
    typed = [path for path in EXCLUDED_FILES if errors[path] == 0]
    assert not typed, (f"no mypy errors left in {', '.join(typed)}: remove them from EXCLUDED_FILES "
                       f"in {Path(__file__).name}")
    assert status == 0 or EXCLUDED_FILES, f"mypy failed without naming a file (status {status}):\n{stderr}"


def test_configuration_checks_the_core_and_every_plugin() -> None:
    """A new plugin package must not stay unchecked because nobody added it to ``files``."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    packages = {"deeploy_core", *(init.parent.relative_to(ROOT).as_posix()
                                  for init in ROOT.glob("plugins/*/deeploy_*/__init__.py"))}
    assert set(config["files"]) == packages
    assert config["python_version"] == "3.10"
    assert config["check_untyped_defs"] is True and config["warn_unused_ignores"] is True
    for path in EXCLUDED_FILES:
        assert (ROOT / path).is_file(), f"EXCLUDED_FILES names {path}, which does not exist"
