"""Network.c reads like hand-written C (issue 34): no loop that runs once, indentation by braces, lines of ≤ 120 columns.

The rewrites of :mod:`deeploy_core.codegen.c_layout` are checked on snippets
(what changes, and what must not: comments, literals, preprocessor lines),
compiled and run before and after with strict warnings to show they keep the
meaning, and on the Network.c of KeywordSpotting, CCT_1 and a tiled
pulp-cluster build against an indentation rule written here independently of
the pass.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.codegen.c_layout import MAX_COLUMNS, tidy_c
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

ONCE_LOOP = re.compile(r"\bfor\s*\([^;]*=\s*0\s*;\s*(\w+)\s*<\s*1\s*;")
COMMENTS_AND_LITERALS = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.S)


def once_loops(source: str) -> list[str]:
    """The loops with trip count 1 in the code of ``source`` (comments and string literals left out)."""
    return [match.group(0) for match in ONCE_LOOP.finditer(COMMENTS_AND_LITERALS.sub(" ", source))]

SNIPPET = r'''#include <stdint.h>
#include <stdio.h>
#include <stdint.h>
#define DC_LONG_MACRO(a) ((a) + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17 + 18 + 19 + 20 + 21)
static int32_t total(const int8_t *x, int32_t a0, int32_t a1, int32_t a2, int32_t a3, int32_t a4, int32_t a5, int32_t a6) {
  int32_t sum = 0;
        for (int32_t b = 0; b < 1; ++b) {
    for (int32_t g = 0; g < 1; ++g) {
      sum += x[b * 4 + g] + a0 + a1 + a2 + a3 + a4 + a5 + a6; /* for (int32_t q = 0; q < 1; ++q) { */
    }
  }
  for (int32_t j = 0; j < 1; ++j) sum += x[j + 1];
  for (int32_t k = 0; k < 1; k++) sum += (int32_t)"{}"[0];
  for (int i = 0; i < 2; ++i)
    for (int32_t k = 0; k < 1; k++) sum += x[i + k];
  for (int32_t u = 0; u < 1; ++u) { sum += 1; /* u is not read here */ }
  return sum;
}
int main(void) {
  const int8_t x[4] = {1, 2, 3, 4};
  printf("%d %d\n", (int)total(x, 1, 2, 3, 4, 5, 6, 7), DC_LONG_MACRO(1)); /* a comment long enough to need a break of its own here */
  return 0;
}
'''


def compile_and_run(source: str, folder: Path, name: str) -> str:
    path = folder / f"{name}.c"
    path.write_text(source)
    binary = folder / name
    subprocess.run(["gcc", "-std=c99", *strict_flags(), "-Werror", "-o", str(binary), str(path)], check=True,
                   capture_output=True, text=True)
    return subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout


def indentation_problems(source: str) -> list[str]:
    """Lines whose indentation is not four spaces per open brace (continuations: four or eight more).

    Written apart from the pass it checks: braces are counted outside comments and literals by a scanner of
    its own; lines inside a multi-line comment and preprocessor lines are skipped.
    """
    problems, depth, in_comment = [], 0, False
    for number, line in enumerate(source.split("\n"), 1):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        code, position, starts_in_comment = [], 0, in_comment
        while position < len(line):
            if in_comment:
                end = line.find("*/", position)
                if end < 0:
                    position = len(line)
                    continue
                in_comment, position = False, end + 2
            elif line.startswith("/*", position):
                in_comment, position = True, position + 2
            elif line.startswith("//", position):
                break
            elif line[position] in "\"'":
                quote, position = line[position], position + 1
                while position < len(line) and line[position] != quote:
                    position += 2 if line[position] == "\\" else 1
                position += 1
            else:
                code.append(line[position])
                position += 1
        if stripped and not starts_in_comment and not stripped.startswith("#"):
            level = depth - (len(stripped) - len(stripped.lstrip("}")))
            allowed = (4 * level,) if stripped.startswith("}") else (4 * level, 4 * level + 4, 4 * level + 8)
            if indent not in allowed:
                problems.append(f"{number}: indent {indent}, level {level}: {stripped[:60]}")
        depth += code.count("{") - code.count("}")
    return problems


def test_loops_that_run_once_become_blocks_and_keep_their_meaning(tmp_path: Path) -> None:
    tidy = tidy_c(SNIPPET)
    assert once_loops(tidy) == [] and once_loops(SNIPPET) != [], tidy
    assert "for (int i = 0; i < 2; ++i)" in tidy  # a loop that runs twice stays
    assert "{ const int32_t j = 0; sum += x[j + 1]; }" in tidy
    assert "sum += (int32_t)\"{}\"[0];" in tidy and "const int32_t k = 0; sum += (int32_t)" not in tidy  # k unused
    assert "/* for (int32_t q = 0; q < 1; ++q) { */" in tidy  # comments are never rewritten
    assert "const int32_t u" not in tidy  # named in a comment only: no declaration
    assert tidy.count("#include <stdint.h>") == 1
    assert compile_and_run(SNIPPET, tmp_path, "before") == compile_and_run(tidy, tmp_path, "after") == "158 232\n"


def test_long_lines_wrap_outside_literals_and_macros_continue_with_a_backslash(tmp_path: Path) -> None:
    tidy = tidy_c(SNIPPET)
    assert max(len(line) for line in tidy.split("\n")) <= MAX_COLUMNS
    macro = tidy.split("#define DC_LONG_MACRO")[1].split("\n")
    assert macro[0].endswith(" \\") and not macro[1].endswith("\\")
    assert '"%d %d\\n"' in tidy  # the format string is whole
    assert indentation_problems(tidy) == []
    assert indentation_problems(SNIPPET) != []  # the check sees the snippet's own ragged indentation
    assert tidy_c(tidy) == tidy


PRAGMA_SNIPPET = r"""#include <stdio.h>
int main(void) {
    int x[3] = {1, 2, 3};
    int sum = 0;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC ivdep
#endif
    for (int c = 0; c < 1; ++c) { sum += x[c]; }
#pragma GCC ivdep
    for (int c = 0; c < 1; ++c) sum += x[c + 1];
#if defined(__GNUC__)
    sum += 4;
#endif
    for (int c = 0; c < 1; ++c) sum += x[c + 2];
    printf("%d\n", sum);
    return 0;
}
"""


def test_a_loop_pragma_goes_with_the_loop_it_annotated(tmp_path: Path) -> None:
    """``#pragma GCC ivdep`` must be followed by a loop: a loop that becomes a block takes its pragmas along
    (with their ``#if`` guard), and leaves every other directive where it was."""
    tidy = tidy_c(PRAGMA_SNIPPET)
    assert once_loops(tidy) == [] and "#pragma" not in tidy, tidy
    assert "#if defined(__GNUC__)\n" in tidy and "sum += 4;" in tidy  # a guard around code stays
    assert compile_and_run(PRAGMA_SNIPPET, tmp_path, "before") == compile_and_run(tidy, tmp_path, "after") == "10\n"


JUMP_SNIPPET = r"""#include <stdio.h>
int main(void) {
    int total = 0, again = 0;
    for (int i = 0; i < 3; ++i) {
        for (int k = 0; k < 1; ++k) {
            if (i == 1) continue;
            for (int j = 0; j < 4; ++j) { if (j == 2) break; total += 100; }
            switch (i) { case 2: break; default: total += 1000; }
            total += 10;
        }
        total += 1;
    }
    for (int k = 0; k < 1; ++k) if (total > 0) break; else again = 1;
    printf("%d %d\n", total, again);
    return 0;
}
"""


def test_a_jump_of_a_loop_that_runs_once_stays_its_own(tmp_path: Path) -> None:
    """In a block, ``continue`` would belong to the enclosing loop: the loop's own ``continue`` and ``break`` become a
    ``goto`` to the block's end; a nested loop's ``break`` and a ``switch``'s stay."""
    tidy = tidy_c(JUMP_SNIPPET)
    assert once_loops(tidy) == [], tidy
    assert "goto dc_once_" in tidy and "if (j == 2) break;" in tidy and "case 2: break;" in tidy
    assert compile_and_run(JUMP_SNIPPET, tmp_path, "before") == compile_and_run(tidy, tmp_path, "after") == "1423 0\n"


IDENTITY_SNIPPET = r"""#include <stdio.h>
int main(void) {
    int x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int r = 1, j = 2, c = 3;
    float f = -0.0f;
    int a = x[(r + 0)] * 1 + x[0 + j] + x[r * 1 + 0] + x[j + 0 * c] * 10 + x[0 + 0]; /* keep * 1 and + 0 */
    float g = f + 0;
    printf("%d %d %s\n", a, (int)(1.5f * 1), g == 0.0f && (1.0f / g) > 0 ? "+0" : "-0");
    return 0;
}
"""


def test_identity_terms_go_where_they_change_nothing(tmp_path: Path) -> None:
    """``* 1`` everywhere, ``+ 0``/``0 +``/``(name)`` in subscripts; never ``+ 0 * c``, a literal's digits, a comment
    or a float ``+ 0`` (``-0.0f + 0`` is ``+0.0f``)."""
    tidy = tidy_c(IDENTITY_SNIPPET)
    assert "int a = x[r] + x[j] + x[r] + x[j + 0 * c] * 10 + x[0]; /* keep * 1 and + 0 */" in tidy, tidy
    assert "float g = f + 0;" in tidy and "(int)(1.5f)" in tidy
    assert compile_and_run(IDENTITY_SNIPPET, tmp_path, "before") == compile_and_run(tidy, tmp_path, "after")
    assert compile_and_run(tidy, tmp_path, "again") == "38 1 +0\n"


def peer_network_c(name: str, options: CompileOptions) -> str:
    root = peer_tests_root()
    if root is None:
        pytest.skip("needs Deeploy's peer tests in ../shared/peer-tests/deeploy")
    peer = next(test for test in find_peer_tests(root, f"/{name}/"))
    host = PluginHost.discover()
    options = CompileOptions(**{**options.__dict__, "input_types": peer.input_types()})
    _, generated = compile_model(peer.model, options, host)
    return str(generated.files["Network.c"])


@pytest.mark.parametrize(("name", "options"), [
    ("MLPerf/KeywordSpotting", CompileOptions(platform="generic-c")),
    ("CCT_1_16_16_8", CompileOptions(platform="generic-c")),
    ("MLPerf/KeywordSpotting", CompileOptions(platform="pulp-cluster", level_sizes={"L1": 16000}, buffering="double")),
], ids=["kws-generic-c", "cct1-generic-c", "kws-pulp-tiled"])
def test_network_c_of_real_networks_reads_like_hand_written_c(name: str, options: CompileOptions,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPLOY_CORE_PLUGINS", raising=False)
    source = peer_network_c(name, options)
    lines = source.split("\n")
    assert max(len(line) for line in lines) <= MAX_COLUMNS, [line for line in lines if len(line) > MAX_COLUMNS][:3]
    assert once_loops(source) == []
    assert indentation_problems(source) == []
    assert source.count("#include <stdint.h>") == 1


@pytest.mark.parametrize("options", [
    CompileOptions(platform="generic-c"),
    CompileOptions(platform="pulp-cluster", level_sizes={"L1": 16000}, buffering="double"),
], ids=["generic-c", "pulp-tiled"])
def test_every_peer_network_c_reads_like_hand_written_c(options: CompileOptions, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same three rules on every peer network (one compile each, about 7 s for both configurations)."""
    monkeypatch.delenv("DEEPLOY_CORE_PLUGINS", raising=False)
    root = peer_tests_root()
    if root is None:
        pytest.skip("needs Deeploy's peer tests in ../shared/peer-tests/deeploy")
    host = PluginHost.discover()
    problems = {}
    for peer in find_peer_tests(root):
        peer_options = CompileOptions(**{**options.__dict__, "input_types": peer.input_types()})
        source = str(compile_model(peer.model, peer_options, host)[1].files["Network.c"])
        found = ([line for line in source.split("\n") if len(line) > MAX_COLUMNS] + once_loops(source)
                 + indentation_problems(source))
        if found:
            problems[peer.name] = found[:2]
    assert problems == {}
