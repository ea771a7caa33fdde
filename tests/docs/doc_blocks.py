"""The code blocks of the documentation, read from the reStructuredText and Markdown sources.

The docs tests run every block, so they need to find every block the way a
reader sees it: ``.. code-block:: LANG`` directives (with their ``:caption:``,
which names the file a block is), Markdown fences in the README, and the
forms that carry no language (``::`` literal blocks, bare ``>>>`` paragraphs),
which are reported so that a test can refuse them: a block without a language
cannot be run, so the docs must not have any.  A page's ``.. include::``
directives are followed: the included file's blocks belong to the page, at
the place of the directive (named by the included file and its own lines).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

LITERAL = "(literal)"
"""Language of a ``::`` literal block: it names no language, so nothing can run it."""

BARE_DOCTEST = "(bare doctest)"
"""Language of a ``>>>`` paragraph outside any directive (write ``.. code-block:: pycon`` instead)."""

_DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\.\s+(?:code-block|code|sourcecode)::\s*(?P<language>\S*)\s*$")
_OPTION = re.compile(r"^\s+:(?P<name>[\w-]+):\s*(?P<value>.*)$")
_FENCE = re.compile(r"^(?P<indent>\s*)```(?P<language>[\w+-]*)\s*$")
_INCLUDE = re.compile(r"^\s*\.\.\s+include::\s*(?P<path>\S+)\s*$")


@dataclass(frozen=True)
class CodeBlock:
    """One code block of a page: where it is, its language, its text and the file it is (if any)."""

    page: str
    """The page, relative to the repository (``docs/install.rst``, ``README.md``)."""
    line: int
    """1-based line of the directive or fence."""
    language: str
    text: str
    """The content, dedented, ending with a newline."""
    caption: str = ""
    """The ``:caption:`` option: the path (relative to the page's working folder) of the file this block is."""
    first_line: int = 0
    """The page line of the first content line (for tracebacks that point into the page)."""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """Every documentation page whose code the test suite runs: ``docs/*.rst`` and the README."""
    return [*sorted((REPO / "docs").glob("*.rst")), REPO / "README.md"]


def page_name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indented_body(lines: list[str], start: int, parent_indent: int) -> tuple[list[str], int]:
    """The lines from ``start`` that are blank or indented deeper than ``parent_indent``, and where they end."""
    end = start
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > parent_indent):
        end += 1
    body = lines[start:end]
    while body and not body[-1].strip():
        body.pop()
    return body, end


def _rst_blocks(page: str, lines: list[str]) -> list[CodeBlock]:
    blocks: list[CodeBlock] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        included = _INCLUDE.match(line)
        if included:
            blocks += read_blocks((REPO / page).parent / included["path"])
            index += 1
            continue
        directive = _DIRECTIVE.match(line)
        literal = not directive and line.rstrip().endswith("::") and not line.lstrip().startswith("..")
        if not directive and not literal:
            if line.lstrip().startswith(">>>"):
                body, end = _indented_body(lines, index + 1, _indent(line) - 1)
                blocks.append(CodeBlock(page, index + 1, BARE_DOCTEST, "\n".join([line, *body]) + "\n",
                                        first_line=index + 1))
                index = end
                continue
            index += 1
            continue
        indent = _indent(line)
        options: dict[str, str] = {}
        cursor = index + 1
        while directive and cursor < len(lines) and (option := _OPTION.match(lines[cursor])) \
                and _indent(lines[cursor]) > indent:
            options[option["name"]] = option["value"].strip()
            cursor += 1
        body, end = _indented_body(lines, cursor, indent)
        skipped = next((offset for offset, text in enumerate(body) if text.strip()), 0)
        text = textwrap.dedent("\n".join(body[skipped:])) + "\n"
        if text.strip():
            language = directive["language"] if directive else LITERAL
            blocks.append(CodeBlock(page, index + 1, language, text, options.get("caption", ""),
                                    first_line=cursor + skipped + 1))
        index = max(end, index + 1)
    return blocks


def _markdown_blocks(page: str, lines: list[str]) -> list[CodeBlock]:
    blocks: list[CodeBlock] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        text = textwrap.dedent("\n".join(lines[index + 1:end])) + "\n"
        blocks.append(CodeBlock(page, index + 1, fence["language"] or LITERAL, text, first_line=index + 2))
        index = end + 1
    return blocks


def read_blocks(path: Path) -> list[CodeBlock]:
    """The code blocks of one page, in document order (those of the files it includes where it includes them)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = page_name(path.resolve())
    return _markdown_blocks(page, lines) if path.suffix == ".md" else _rst_blocks(page, lines)


def all_blocks() -> list[CodeBlock]:
    return [block for path in pages() for block in read_blocks(path)]
