"""Running one page's blocks in document order, as a reader following the page would.

Per block kind:

* a block with a ``:caption:`` is a file: it is written to that path in the
  working folder, where later commands of the page use it;
* ``python``: executed, all of a page's blocks in one namespace;
* ``pycon``: a doctest in that namespace (the shown results must come out);
* ``console``: a session (:mod:`tests.docs.doc_commands`): each command must
  exit with 0 (2 when it shows an ``error:`` line) and print the lines shown;
* ``c`` without a caption: a fragment built around the page's network
  (:mod:`tests.docs.c_fragments`) whose ``scores`` must match ONNX Runtime;
* ``sh``: reference commands, each run on its own by ``test_doc_commands.py``;
* ``text``: diagrams, layouts and synopses; nothing to run.
"""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any, Callable

from tests.docs.doc_blocks import CodeBlock
from tests.docs.doc_commands import DocCommand, console_commands, output_matches
from tests.docs.doc_shell import DocShell

FILE_LANGUAGES = frozenset({"python", "c", "yaml", "toml"})
RUN_HERE = frozenset({"python", "pycon", "console", "c"})
RUN_ELSEWHERE = frozenset({"sh"})
NOT_CODE = frozenset({"text"})
LANGUAGES = FILE_LANGUAGES | RUN_HERE | RUN_ELSEWHERE | NOT_CODE


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.splitlines()[-lines:])


class PageSession:
    """One page's working folder, shell and Python namespace."""

    def __init__(self, shell: DocShell, run_c_fragment: Callable[[CodeBlock], None]) -> None:
        self.shell = shell
        self.run_c_fragment = run_c_fragment
        self.namespace: dict[str, Any] = {"__name__": "__docs__"}

    @property
    def folder(self) -> Path:
        return self.shell.folder

    def run(self, blocks: list[CodeBlock]) -> None:
        for block in blocks:
            self.run_block(block)

    def run_block(self, block: CodeBlock) -> None:
        if block.caption:
            self._write(block)
        elif block.language == "python":
            # Padding keeps tracebacks pointing at the page's own line numbers.
            source = "\n" * (block.first_line - 1) + block.text
            exec(compile(source, block.page, "exec"), self.namespace)  # noqa: S102 - the docs' own examples
        elif block.language == "pycon":
            self._doctest(block)
        elif block.language == "console":
            for command in console_commands(block):
                self._console(command)
        elif block.language == "c":
            self.run_c_fragment(block)
        elif block.language not in RUN_ELSEWHERE | NOT_CODE:
            raise AssertionError(f"{block.where}: no way to run a {block.language!r} block")

    def _write(self, block: CodeBlock) -> None:
        path = Path(block.caption)
        assert not path.is_absolute() and ".." not in path.parts, f"{block.where}: caption {block.caption!r}"
        target = self.folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text, encoding="utf-8")

    def _doctest(self, block: CodeBlock) -> None:
        test = doctest.DocTestParser().get_doctest(block.text, self.namespace, block.where, block.page,
                                                   block.first_line - 1)
        report: list[str] = []
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=report.append, clear_globs=False)
        self.namespace.update(test.globs)  # the test ran on a copy; later blocks see what it defined
        assert runner.failures == 0, "".join(report)

    def _console(self, command: DocCommand) -> None:
        result = self.shell.run(command)
        output = result.stdout + result.stderr
        wanted = 2 if command.expects_error else 0
        assert result.returncode == wanted, (
            f"{command.where}: {command.text!r} exited with {result.returncode}, the page implies {wanted}:\n"
            f"{_tail(output)}")
        lines = output.splitlines()
        for line in command.expected:
            assert output_matches(line, lines), (
                f"{command.where}: {command.text!r} did not print {line!r}; it printed:\n{_tail(output)}")
