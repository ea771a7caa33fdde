"""Which runtime sources and headers a network needs, read off the C code itself.

A platform ships every kernel it has, but a firmware image should carry only
the kernels the network calls.  No table says which file holds which kernel:
each runtime source is scanned for the functions it defines with external
linkage, and a source is needed when the generated code, or a source already
needed, names one of them (transitively, so a kernel calling a helper in
another file pulls that file in).  Headers follow the ``#include "..."``
lines of everything kept.  Scanning is lexical (comments and string literals
removed first), which is enough for the runtime's plain C99 and errs on the
side of keeping a file: a name that merely appears keeps its source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

_COMMENTS_AND_STRINGS = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)
_PREPROCESSOR_LINE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.MULTILINE)


def _code_only(text: str) -> str:
    """``text`` without comments, string/character literals and preprocessor lines."""
    return _PREPROCESSOR_LINE.sub(" ", _COMMENTS_AND_STRINGS.sub(" ", text))


def referenced_names(text: str) -> set[str]:
    """Every identifier in the C text ``text`` outside comments, literals and preprocessor lines."""
    return set(_IDENTIFIER.findall(_code_only(text)))


_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)", re.MULTILINE)
_PASTE = re.compile(r"\w+(?:\s*##\s*\w+)+")


def _call_arguments(code: str, start: int) -> list[str]:
    """The top-level comma-separated arguments of the call whose ``(`` ends just before ``start``."""
    arguments: list[str] = []
    depth, begin = 0, start
    for index in range(start, len(code)):
        char = code[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                arguments.append(code[begin:index].strip())
                return arguments
            depth -= 1
        elif char == "," and depth == 0:
            arguments.append(code[begin:index].strip())
            begin = index + 1
    return arguments


def pasted_names(text: str) -> set[str]:
    """Identifiers that function-like macros build with ``##`` where the file invokes them.

    Kernel families are often defined by one macro invoked per type or
    operator (``DEFINE(add)`` giving ``dcg_add_f32``); those names appear
    nowhere literally.  Every pasted identifier counts (statics and helpers
    too), which can only keep a file that is not needed, never drop one that is.
    """
    stripped = _COMMENTS_AND_STRINGS.sub(" ", text)
    code = _code_only(text)
    names: set[str] = set()
    for macro in _MACRO.finditer(stripped):
        pastes = _PASTE.findall(macro.group(3))
        if not pastes:
            continue
        parameters = [part.strip() for part in macro.group(2).split(",")]
        for call in re.finditer(rf"\b{macro.group(1)}\s*\(", code):
            arguments = dict(zip(parameters, _call_arguments(code, call.end())))
            for paste in pastes:
                pieces = [piece.strip() for piece in paste.split("##")]
                names.add("".join(arguments.get(piece, piece) for piece in pieces))
    return names


_BRACES_AND_SEMICOLONS = re.compile(r"[{};]")


def defined_functions(text: str) -> set[str]:
    """Functions the C file ``text`` defines with external linkage (file-scope ``name(...) {``, not ``static``),
    plus the names its macros paste together (:func:`pasted_names`)."""
    code = _code_only(text)
    defined: set[str] = set()
    depth = 0
    statement_start = 0
    for mark in _BRACES_AND_SEMICOLONS.finditer(code):  # only these characters change the state below
        char, index = mark.group(0), mark.start()
        if char == "{":
            if depth == 0:
                head = code[statement_start:index]
                found = re.search(r"([A-Za-z_]\w*)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$", head)
                if found and not re.search(r"\bstatic\b", head) and not re.search(r"[=]", head):
                    defined.add(found.group(1))
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                statement_start = index + 1
        elif depth == 0:
            statement_start = index + 1
    return defined | pasted_names(text)


def used_sources(generated: Iterable[str], sources: Iterable[Path]) -> tuple[Path, ...]:
    """The members of ``sources`` that the C texts ``generated`` need, directly or through each other (sorted)."""
    texts = {source: source.read_text(encoding="utf-8") for source in sources}
    definitions = {source: defined_functions(text) for source, text in texts.items()}
    wanted: set[str] = set()
    for text in generated:
        wanted |= referenced_names(text)
    kept: set[Path] = set()
    while True:
        added = {source for source, names in definitions.items() if source not in kept and names & wanted}
        if not added:
            return tuple(sorted(kept))
        kept |= added
        for source in added:
            wanted |= referenced_names(texts[source])


def included_headers(text: str) -> list[str]:
    """The file names of the ``#include "..."`` lines of ``text``, in order."""
    return _QUOTED_INCLUDE.findall(_COMMENTS_AND_STRINGS.sub(lambda match: match.group(0) if match.group(0).startswith('"')
                                                              else " ", text))


def header_closure(texts: Mapping[str, str], origins: Mapping[str, Path], include_dirs: Iterable[Path]) -> dict[str, Path]:
    """The headers reachable by quoted includes from ``texts``, by include name → file.

    A name is looked up beside the including file first (``origins`` gives
    where each text lives), then in ``include_dirs`` in order, as a C compiler
    does; names found nowhere (headers among the generated files themselves)
    are left out.
    """
    directories = tuple(include_dirs)
    found: dict[str, Path] = {}
    pending = [(name, origins.get(key)) for key, text in sorted(texts.items()) for name in included_headers(text)]
    while pending:
        name, origin = pending.pop()
        if name in found:
            continue
        candidates = ([origin.parent / name] if origin is not None else []) + [folder / name for folder in directories]
        path = next((candidate for candidate in candidates if candidate.is_file()), None)
        if path is None:
            continue
        found[name] = path
        pending += [(child, path) for child in included_headers(path.read_text(encoding="utf-8"))]
    return dict(sorted(found.items()))
