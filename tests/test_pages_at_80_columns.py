"""Every page the tool writes, laid out by Chromium at the width of an 80-column terminal's screenshot (issue 33):
memory.html of a tiled compile, pareto.html of a sweep and profile.html of ``validate --profile`` keep every text
clear of every other and never make the window scroll sideways."""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.sweep.pareto import pareto_html
from deeploy_core.testing.terminal import run_piped
from tests.browser import overlapping_texts, text_geometry
from tests.support.sweep_records import sweep_records

WIDTH = 640
"""80 columns of an 8-pixel terminal font."""

pytest.importorskip("deeploy_pulp_cluster", reason="the cluster platform (plugins/pulp_cluster) is not installed")


def check_fits(page: Path) -> dict:
    geometry = text_geometry(page, WIDTH, 1400)
    assert geometry["texts"], "no text measured: the page did not render"
    assert geometry["scroll"] <= geometry["client"], f"{page.name} is wider than {WIDTH} pixels"
    assert overlapping_texts(geometry) == []
    return geometry


def test_the_memory_page_of_a_tiled_compile(tiny_cnn: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run_piped("compile", str(tiny_cnn), "--platform", "pulp-cluster", "--l1", "8KiB", "--plot", "-o", str(out),
                     plugins="generic-c,pulp-cluster")
    assert done.returncode == 0, done.stderr
    texts = " ".join(text["text"] for text in check_fits(out / "memory.html")["texts"])
    assert "tiny.onnx on pulp-cluster (L1 8192 B, single buffering, 8 cores): static memory map" in texts


def test_the_pareto_page_of_a_sweep(tmp_path: Path) -> None:
    page = tmp_path / "pareto.html"
    page.write_text(pareto_html("sweep on pulp-cluster", {"miniMobileNet": sweep_records(),
                                                          "KeywordSpotting": sweep_records()})[0], encoding="utf-8")
    check_fits(page)


def test_the_profile_page_of_a_tiled_build(tiny_cnn: Path, tmp_path: Path) -> None:
    page = tmp_path / "profile.html"
    done = run_piped("validate", str(tiny_cnn), "--platform", "pulp-cluster", "--l1", "8KiB", "--profile",
                     "--profile-html", str(page), plugins="generic-c,pulp-cluster")
    assert done.returncode == 0, done.stderr
    texts = " ".join(text["text"] for text in check_fits(page)["texts"])
    assert "Per-layer profile of tiny.onnx on pulp-cluster (L1 8192 B, single buffering, 8 cores)" in texts
    assert "est. cycles" in texts
