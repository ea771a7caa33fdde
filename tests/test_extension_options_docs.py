"""docs/cli.rst lists the options of the bundled extensions exactly as their schemas declare them.

The list is written out in the page (so it reads well and builds without the
plugins) and checked here against the declarations of the installed bundled
plugins, rendered the way ``compile --help`` renders them: a changed default,
help text or a new option fails this test until the page says the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.options.listing import declared_options, option_metavar, option_summary
from deeploy_core.options.resolved import KIND_LABELS
from deeploy_core.plugins import PluginHost, PluginSelection

CLI_PAGE = Path(__file__).resolve().parent.parent / "docs" / "cli.rst"
BUNDLED = frozenset({"generic-c", "pulp-cluster", "minimalloc", "tetris"})
START, END = ".. options-reference-start", ".. options-reference-end"


def reference(host: PluginHost) -> str:
    """The reStructuredText list of every declared option: extension, then ``NAME=TYPE`` and its summary."""
    lines = []
    for entry in declared_options(host):
        lines.append(f"{KIND_LABELS[entry.kind]} ``{entry.name}``")
        for spec in entry.options:
            lines += [f"   ``{option_metavar(spec)}``", f"      {option_summary(spec)}"]
    return "\n".join(lines)


def page_reference() -> str:
    text = CLI_PAGE.read_text(encoding="utf-8")
    assert START in text and END in text, f"{CLI_PAGE.name} lost its options reference markers"
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n")


def test_the_cli_page_lists_the_bundled_extensions_options_as_declared() -> None:
    host = PluginHost.discover(PluginSelection(allow_list=BUNDLED))
    missing = sorted(BUNDLED - {record.name for record in host.plugins(include_builtin=False)})
    if missing:
        pytest.skip(f"bundled plugins not installed: {', '.join(missing)}")
    expected = reference(host)
    assert page_reference() == expected, (
        f"docs/cli.rst's options reference differs from the schemas; between the markers it should read:\n{expected}")


def test_the_reference_names_every_option_kind_that_declares_options() -> None:
    """The check above is not vacuous: the bundled plugins declare options of four kinds."""
    listed = page_reference()
    for owner in ("platform ``pulp-cluster``", "memory level ``l2-l1``", "tiler ``single-buffering``",
                  "allocator ``tetris-random``"):
        assert owner in listed
