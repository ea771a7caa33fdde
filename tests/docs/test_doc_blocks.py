"""Every code block of the docs and the README is one the docs tests know how to run.

These checks are static and fast: a block in a language nothing runs, a
literal block without a language, a file block no command uses, or a
command naming a program the runner does not know would otherwise be skipped
silently by the tests that execute the pages.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from tests.docs.doc_blocks import BARE_DOCTEST, LITERAL, all_blocks, pages, read_blocks
from tests.docs.doc_commands import console_commands, sh_commands
from tests.docs.doc_shell import DocShell
from tests.docs.page_session import FILE_LANGUAGES, LANGUAGES


def test_the_pages_have_code_to_run() -> None:
    languages = {block.language for block in all_blocks()}
    assert {"python", "pycon", "console", "sh", "c"} <= languages


def test_every_block_names_a_language_the_tests_run() -> None:
    wrong = [f"{block.where}: {block.language or 'no language'}" for block in all_blocks()
             if block.language not in LANGUAGES]
    assert not wrong, ("blocks nothing runs (use .. code-block:: with one of "
                       f"{sorted(LANGUAGES)}; {LITERAL} is a '::' block, {BARE_DOCTEST} a bare '>>>'): {wrong}")


def test_file_blocks_are_named_and_used_by_a_later_command() -> None:
    problems = []
    for path in pages():
        blocks = read_blocks(path)
        for index, block in enumerate(blocks):
            if block.language in {"yaml", "toml"} and not block.caption:
                problems.append(f"{block.where}: a {block.language} block is a file; name it with :caption:")
            if not block.caption:
                continue
            if block.language not in FILE_LANGUAGES:
                problems.append(f"{block.where}: a {block.language} block cannot be a file")
            file = PurePosixPath(block.caption)
            named = {str(file), *map(str, file.parents)} - {"."}
            later = [command for other in blocks[index + 1:] if other.language == "console"
                     for command in console_commands(other)]
            if not any(set(command.argv) & named for command in later):
                problems.append(f"{block.where}: no later console command uses {block.caption!r}")
    assert not problems, problems


def test_every_command_names_a_program_the_tests_run() -> None:
    commands = []
    for block in all_blocks():
        if block.language == "sh":
            commands += sh_commands(block)
        elif block.language == "console":
            commands += console_commands(block)
    assert commands
    unknown = [f"{command.where}: {command.text}" for command in commands if not DocShell.knows(command)]
    assert not unknown, unknown
