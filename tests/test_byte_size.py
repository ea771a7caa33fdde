"""``--l1 64k`` / ``--l1 64KiB`` and a mistyped extension name (issue 33 point 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deeploy_core.cli.byte_size import parse_byte_size
from deeploy_core.plugins.registry import closest_name
from deeploy_core.testing.terminal import run_piped

pytest.importorskip("deeploy_pulp_cluster", reason="the cluster platform (plugins/pulp_cluster) is not installed")


@pytest.mark.parametrize(("text", "size"), [("64000", 64000), ("64k", 64000), ("64K", 64000), ("64kB", 64000),
                                            ("64KiB", 65536), ("64ki", 65536), ("1.5KiB", 1536), ("2MiB", 2097152),
                                            ("1M", 1000000), ("512 B", 512)])
def test_sizes_read_as_written(text: str, size: int) -> None:
    assert parse_byte_size(text) == size


@pytest.mark.parametrize(("text", "says"), [("64kb", "'b' is bits; write 64kB"), ("0", "whole, positive"),
                                            ("0.5", "whole, positive"), ("1.0001k", "whole, positive"),
                                            ("64x", "not a size in bytes"), ("k", "not a size in bytes")])
def test_what_is_no_size_is_refused_with_the_forms_that_are(text: str, says: str) -> None:
    with pytest.raises(ValueError, match="64KiB") as raised:
        parse_byte_size(text)
    assert says in str(raised.value)


@pytest.mark.parametrize(("given", "capacity"), [("64k", 64000), ("64KiB", 65536), ("65536", 65536)])
def test_the_level_gets_the_size_given(given: str, capacity: int, tiny_cnn: Path, tmp_path: Path) -> None:
    done = run_piped("compile", str(tiny_cnn), "--platform", "pulp-cluster", "--l1", given, "-o", str(tmp_path / "o"),
                     plugins="pulp-cluster")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["memory_levels"]["L1"]["capacity"] == capacity


def test_a_wrong_size_is_one_line_naming_the_option(tiny_cnn: Path, tmp_path: Path) -> None:
    done = run_piped("compile", str(tiny_cnn), "--platform", "pulp-cluster", "--l1", "64kb", "-o", str(tmp_path / "o"),
                     plugins="pulp-cluster")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "Invalid value for '--l1': '64kb': 'b' is bits; write 64kB for bytes" in done.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("name", "meant"), [("generic", "generic-c"), ("pulp", "pulp-cluster"),
                                             ("Generic-C", "generic-c"), ("cluster", "pulp-cluster"),
                                             ("firstfit", "first-fit"), ("cortex-m4", None)])
def test_a_mistyped_name_gets_the_one_it_most_likely_meant(name: str, meant: str | None) -> None:
    assert closest_name(name, ["first-fit", "generic-c", "minimalloc", "pulp-cluster", "tetris-coopt"]) == meant


def test_a_wrong_platform_name_suggests_the_right_one(tiny_cnn: Path, tmp_path: Path) -> None:
    done = run_piped("compile", str(tiny_cnn), "--platform", "generic", "-o", str(tmp_path / "o"),
                     plugins="generic-c,pulp-cluster")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == ("error: no platform named 'generic' (available: generic-c, "
                                                    "pulp-cluster); did you mean 'generic-c'?")
