"""The package maps in CONTRIBUTING.md and docs/architecture.rst are the code's (issue 34).

They are rendered from the layers of ``tests/support/package_layers.py`` and
each package's docstring; a package missing from a map, a moved one or a stale
summary fails here.  Fix it with ``python -m tests.support.package_map``.
"""

from __future__ import annotations

from tests.support import package_map

FIX = "run `python -m tests.support.package_map` to write the maps"


def test_the_contributing_map_is_the_code() -> None:
    assert package_map.markdown_section() == package_map.expected_markdown(), FIX


def test_the_architecture_map_is_the_code() -> None:
    assert package_map.rst_section() == package_map.expected_rst(), FIX


def test_every_package_is_in_the_maps_with_a_summary() -> None:
    rows = package_map.rows()
    assert all(text for _, _, _, text in rows), [path for _, _, path, text in rows if not text]
    for _, _, path, _ in rows:
        assert f"`{path}`" in package_map.markdown_section() and f"``{path}``" in package_map.rst_section()
