"""The package map of ``CONTRIBUTING.md`` and ``docs/architecture.rst``, rendered from the code.

One row per package or top-level module of ``deeploy_core``, grouped by its
layer (:mod:`tests.support.package_layers`), with the first paragraph of
its docstring.  ``tests/test_package_map.py`` fails when a document's map differs
from the rendering (a new package, a moved one, a changed docstring);
``python -m tests.support.package_map`` writes both documents.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.package_layers import LAYERS, PACKAGE

ROOT = PACKAGE.parent
MARKDOWN = ROOT / "CONTRIBUTING.md"
RST = ROOT / "docs" / "architecture.rst"
BEGIN, END = "package map: begin", "package map: end"


def summary(unit: str) -> str:
    """The first paragraph of the docstring of package or module ``unit``, on one line."""
    path = PACKAGE / unit / "__init__.py" if (PACKAGE / unit).is_dir() else PACKAGE / f"{unit}.py"
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(docstring.split("\n\n")[0].split())


def rows() -> list[tuple[int, str, str, str]]:
    """(layer number from 1 at the bottom, the layer's title, the package's path, its summary), lowest layer first."""
    return [(number, title, f"deeploy_core/{unit}" + ("/" if (PACKAGE / unit).is_dir() else ".py"), summary(unit))
            for number, (title, units) in enumerate(LAYERS, 1) for unit in units]


def markdown() -> str:
    lines = ["| layer | path | what |", "|---|---|---|"]
    lines += [f"| {number} | `{path}` | {text.replace('|', '/')} |" for number, _, path, text in rows()]
    return "\n".join(lines)


def rst() -> str:
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 5 25 70", "", "   * - layer", "     - path",
             "     - what"]
    for number, _, path, text in rows():
        lines += [f"   * - {number}", f"     - ``{path}``", f"     - {text}"]
    return "\n".join(lines)


def layer_titles(prefix: str) -> str:
    """The layers, bottom first, one line each (``prefix`` starts every line)."""
    return "\n".join(f"{prefix}{number}. {title}" for number, (title, _) in enumerate(LAYERS, 1))


def _match(text: str, start_marker: str, end_marker: str) -> re.Match[str]:
    match = re.search(re.escape(start_marker) + r"\n(.*?)" + re.escape(end_marker), text, re.S)
    if match is None:
        raise AssertionError(f"markers {start_marker!r} … {end_marker!r} are missing")
    return match


def _section(text: str, start_marker: str, end_marker: str) -> str:
    return _match(text, start_marker, end_marker).group(1).strip("\n")


def expected_markdown() -> str:
    return layer_titles("") + "\n\n" + markdown()


def expected_rst() -> str:
    return layer_titles("") + "\n\n" + rst()


def markdown_section() -> str:
    return _section(MARKDOWN.read_text(encoding="utf-8"), f"<!-- {BEGIN} -->", f"<!-- {END} -->")


def rst_section() -> str:
    return _section(RST.read_text(encoding="utf-8"), f".. {BEGIN}\n", f".. {END}")


def write() -> None:
    """Put the rendered maps between the markers of both documents."""
    for path, expected, start, end in ((MARKDOWN, expected_markdown(), f"<!-- {BEGIN} -->", f"<!-- {END} -->"),
                                       (RST, expected_rst(), f".. {BEGIN}\n", f".. {END}")):
        text = path.read_text(encoding="utf-8")
        match = _match(text, start, end)
        path.write_text(text[:match.start()] + start + "\n" + expected + "\n\n" + end + text[match.end():],
                        encoding="utf-8")


if __name__ == "__main__":
    write()
