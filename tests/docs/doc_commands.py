"""Command lines of ``sh`` and ``console`` blocks, split into arguments without a shell.

Two block kinds, two meanings:

* ``sh``: reference commands, one per line (``#`` starts a comment, ``\\``
  continues a line).  Each is independent of the others — a README line is an
  example to copy, not a step of a script — so each runs in a fresh folder.
* ``console``: a session.  ``$ `` starts a command; the lines after it, up
  to the next ``$ ``, are output the command must print (see
  :func:`output_matches`).  Commands run in order in one folder.

Shell syntax beyond words, quotes and leading ``NAME=value`` assignments
(pipes, redirections, ``&&``) is refused: the tests start programs with an
argument list, as the project does everywhere, and glob patterns are expanded
by the runner.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from tests.docs.doc_blocks import CodeBlock

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SHELL_OPERATORS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "&>"})


@dataclass(frozen=True)
class DocCommand:
    """One command as the page shows it, split into words."""

    where: str
    text: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    expected: tuple[str, ...] = ()
    """Output lines the command must print (console sessions only)."""

    @property
    def expects_error(self) -> bool:
        """A session that shows an ``error:`` line documents a refusal: exit code 2 instead of 0."""
        return any(line.startswith("error:") for line in self.expected)


def split_command(text: str, where: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """Words and leading environment assignments of one command line."""
    words = shlex.split(text, comments=True)
    env: dict[str, str] = {}
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    operators = sorted(set(words) & _SHELL_OPERATORS)
    if operators:
        raise ValueError(f"{where}: shell syntax {operators} in {text!r}; write one plain command per line")
    if not words:
        raise ValueError(f"{where}: {text!r} has no command")
    return tuple(words), env


def _logical_lines(block: CodeBlock) -> list[tuple[int, str]]:
    """(page line, text) with backslash continuations joined."""
    joined: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for offset, line in enumerate(block.text.splitlines()):
        number = block.first_line + offset
        if pending is not None:
            pending = (pending[0], pending[1] + " " + line.strip())
        else:
            pending = (number, line)
        if pending[1].rstrip().endswith("\\"):
            pending = (pending[0], pending[1].rstrip()[:-1].rstrip())
            continue
        joined.append(pending)
        pending = None
    if pending is not None:
        joined.append(pending)
    return joined


def sh_commands(block: CodeBlock) -> list[DocCommand]:
    """Every command of an ``sh`` block (blank and comment-only lines skipped)."""
    commands = []
    for number, text in _logical_lines(block):
        if not shlex.split(text, comments=True):
            continue
        where = f"{block.page}:{number}"
        argv, env = split_command(text, where)
        commands.append(DocCommand(where, text.strip(), argv, env))
    return commands


def console_commands(block: CodeBlock) -> list[DocCommand]:
    """Every ``$ `` command of a ``console`` block with the output lines shown after it."""
    commands: list[DocCommand] = []
    current: tuple[int, str] | None = None
    expected: list[str] = []

    def close() -> None:
        if current is not None:
            where = f"{block.page}:{current[0]}"
            argv, env = split_command(current[1], where)
            commands.append(DocCommand(where, current[1], argv, env, tuple(expected)))

    for number, text in _logical_lines(block):
        if text.startswith("$ "):
            close()
            current, expected = (number, text[2:].strip()), []
        elif current is None:
            raise ValueError(f"{block.page}:{number}: console output {text!r} before any '$ ' command")
        elif text.strip():
            expected.append(text.strip())
    close()
    return commands


def _normalised(line: str) -> str:
    return " ".join(line.split())


def output_matches(expected: str, actual_lines: list[str]) -> bool:
    """Whether some output line reads as ``expected``: runs of spaces compare equal, ``...`` stands for anything.

    Tables are padded to their widest cell, which depends on what else is
    listed, so widths never count; ``...`` keeps the page free of numbers a
    reader does not need (timings, float noise).
    """
    pattern = ".*".join(re.escape(part) for part in _normalised(expected).split("..."))
    compiled = re.compile(rf"^{pattern}$")
    return any(compiled.match(_normalised(line)) for line in actual_lines)
