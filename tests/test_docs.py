"""The documentation site builds with warnings as errors, documents every hook with its example, and starts at install.

The code examples of the pages are run by the tests in ``tests/docs``.
"""

from __future__ import annotations

import html.parser
import subprocess
import sys
from pathlib import Path

import pytest

from deeploy_core import hookspecs

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


class _TextExtractor(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _text(path: Path) -> str:
    extractor = _TextExtractor()
    extractor.feed(path.read_text(encoding="utf-8"))
    return " ".join("".join(extractor.parts).split())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("docs-site")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(output)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"sphinx-build failed:\n{result.stdout}\n{result.stderr}"
    assert result.stderr.strip() == "", f"sphinx printed warnings:\n{result.stderr}"
    return output


def test_site_has_every_page(site: Path) -> None:
    for page in ("index", "install", "architecture", "hooks", "writing-a-plugin", "passes", "tiling", "allocation",
                 "pulp-cluster", "cortex-m", "cli", "report", "generated-code", "testing", "security"):
        assert (site / f"{page}.html").is_file(), page


@pytest.mark.parametrize("hook_name", sorted(hookspecs.HOOK_KINDS))
def test_hook_reference_shows_the_hook_and_its_example(site: Path, hook_name: str) -> None:
    page = _text(site / "hooks.html")
    assert f"deeploy_core.hookspecs.{hook_name}" in page
    docstring = getattr(hookspecs, hook_name).__doc__
    example_lines = [line.strip()[4:] for line in docstring.splitlines() if line.strip().startswith(">>> ")]
    assert example_lines
    for line in example_lines:
        assert " ".join(line.split()) in page, f"example line of {hook_name} missing from the reference: {line}"


def test_architecture_page_has_the_lifecycle_diagram(site: Path) -> None:
    page = _text(site / "architecture.html")
    for step in ("discover", "select", "load", "validate", "register", "registry", "compose"):
        assert step in page


def test_install_comes_first_in_the_site_and_the_readme(site: Path) -> None:
    index = (DOCS / "index.rst").read_text(encoding="utf-8")
    toctree = index[index.index(".. toctree::"):].splitlines()
    entries = [line.strip() for line in toctree[1:] if line.strip() and not line.strip().startswith(":")]
    assert entries[0] == "install"
    readme_top = (REPO / "README.md").read_text(encoding="utf-8").splitlines()[:8]
    assert any("docs/install.rst" in line for line in readme_top)
    assert "pip install -e" in _text(site / "install.html")
