"""The static memory-map plot: well-formed, escaped, deterministic, self-contained, and visible in a real browser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pytest

from deeploy_core.report.memory_plot import (
    LEVEL_FRAME_COLOURS,
    PlotBlock,
    PlotLevel,
    block_colour,
    level_file_names,
    memory_plot_html,
    memory_plot_svg,
    write_memory_plot,
)
from tests.browser import screenshot

SVG = "{http://www.w3.org/2000/svg}"
NASTY_NAME = "a<b>&c\"d'e ünï 名前"


def _level(name: str, capacity: int | None, count: int, base_size: int) -> PlotLevel:
    """A level with ``count`` buffers in a staircase: each lives two steps, three share the level at once."""
    blocks = tuple(
        PlotBlock(f"{name.lower()}_buf{i}", (i % 3) * base_size, base_size, i, i + 2) for i in range(count)
    )
    return PlotLevel(name, capacity, blocks)


def _three_levels() -> list[PlotLevel]:
    return [
        _level("L3", 8 << 20, 4, 1 << 20),
        _level("L2", 512 << 10, 6, 100 << 10),
        _level("L1", 64 << 10, 5, 12 << 10),
    ]


def _block_rects(svg: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [rect for rect in root.iter(f"{SVG}rect") if rect.get("class") == "block"]


def test_svg_parses_and_has_one_block_rect_per_buffer() -> None:
    level = _level("L2", 512 << 10, 7, 64 << 10)
    svg = memory_plot_svg(level)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert root.get("data-level") == "L2"
    assert root.get("width") and root.get("height") and root.get("viewBox")
    assert len(_block_rects(svg)) == len(level.blocks)
    frames = [rect for rect in root.iter(f"{SVG}rect") if rect.get("class") == "frame"]
    assert len(frames) == 1 and frames[0].get("stroke") == LEVEL_FRAME_COLOURS[0]
    headings = [text for text in root.iter(f"{SVG}text") if text.get("class") == "heading"]
    assert [heading.text for heading in headings] == ["L2"]


def test_capacity_line_is_dashed_when_known_and_absent_when_unknown() -> None:
    known = ET.fromstring(memory_plot_svg(_level("L1", 3072, 2, 1024)))
    groups = [group for group in known.iter(f"{SVG}g") if group.get("class") == "capacity"]
    assert len(groups) == 1
    line = groups[0].find(f"{SVG}line")
    assert line is not None and line.get("stroke-dasharray")

    unknown = ET.fromstring(memory_plot_svg(_level("L1", None, 2, 1024)))
    assert not [group for group in unknown.iter(f"{SVG}g") if group.get("class") == "capacity"]


def test_names_are_escaped_and_round_trip() -> None:
    block = PlotBlock(NASTY_NAME, 16, 32, 1, 4)
    level = PlotLevel(NASTY_NAME, 1024, (block,))
    svg = memory_plot_svg(level)
    assert "<b>" not in svg and 'c"d' not in svg  # raw markup never reaches the document
    root = ET.fromstring(svg)
    assert root.get("data-level") == NASTY_NAME
    (rect,) = _block_rects(svg)
    assert rect.get("data-buffer") == NASTY_NAME
    title = rect.find(f"{SVG}title")
    assert title is not None
    assert title.text == f"{NASTY_NAME}: offset 16, size 32 bytes, live in steps [1, 4)"


def test_characters_xml_cannot_hold_are_replaced_not_emitted() -> None:
    level = PlotLevel("bad\x00\x1fname", 64, (PlotBlock("x\x07y", 0, 8, 0, 1),))
    root = ET.fromstring(memory_plot_svg(level))
    assert root.get("data-level") == "bad\ufffd\ufffdname"


RENDER_ELSEWHERE = """
import json, sys
from deeploy_core.report.memory_plot import PlotBlock, PlotLevel, memory_plot_html, memory_plot_svg
levels = [PlotLevel(name, capacity, tuple(PlotBlock(*block) for block in blocks))
          for name, capacity, blocks in json.load(sys.stdin)]
json.dump([memory_plot_svg(levels[1], index=1), memory_plot_html("net", levels)], sys.stdout)
"""
"""Renders levels given as plain data on stdin: the SVG of the second level and the page of all of them."""


def test_output_is_deterministic() -> None:
    """Two other processes, with other hash seeds and the levels as plain data, write the SVG and the page this one
    writes: nothing depends on Python's per-process salted ``hash()`` (set or dict order, ids)."""
    levels = _three_levels()
    data = json.dumps([[level.name, level.capacity, [astuple(block) for block in level.blocks]] for level in levels])
    here = [memory_plot_svg(levels[1], index=1), memory_plot_html("net", levels)]
    for seed in ("1", "2"):
        elsewhere = subprocess.run([sys.executable, "-c", RENDER_ELSEWHERE], input=data, capture_output=True,
                                   text=True, check=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        assert json.loads(elsewhere) == here, f"PYTHONHASHSEED={seed} renders other bytes"
    # Colours come from a stable hash, not Python's per-process salted hash(): pin one.
    assert block_colour("conv1_out") == "#94a9dd"
    assert block_colour("conv1_out") != block_colour("conv2_out")


def test_block_colour_is_stable_across_processes() -> None:
    script = "from deeploy_core.report.memory_plot import block_colour; print(block_colour('conv1_out'))"
    colours = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert colours == {block_colour("conv1_out")}


def test_empty_level_renders() -> None:
    svg = memory_plot_svg(PlotLevel("L1", 65536, ()))
    assert _block_rects(svg) == []
    page = memory_plot_html("empty", [PlotLevel("L1", 65536, ()), PlotLevel("L0", None, ())])
    assert "0 buffers, peak 0 bytes of capacity 65536" in page
    assert "0 buffers, peak 0 bytes, capacity unknown" in page
    assert "No memory levels" in memory_plot_html("nothing", [])


def test_html_is_self_contained() -> None:
    page = memory_plot_html('net "<x>"', _three_levels())
    assert page.count("https://") == 0
    assert page.count("http://") == page.count('xmlns="http://www.w3.org/2000/svg"') == 3
    assert "<script" not in page.lower()
    assert "<title>net &quot;&lt;x&gt;&quot;</title>" in page
    assert "<style>" in page and "<link" not in page.lower()
    assert "4 buffers, peak 3145728 bytes of capacity 8388608" in page


def test_html_flags_a_level_over_capacity() -> None:
    page = memory_plot_html("net", [_level("L1", 1000, 3, 1024)])
    assert "3 buffers, peak 3072 bytes of capacity 1000 (over capacity by 2072 bytes)" in page
    assert 'class="legend over"' in page


def test_invalid_geometry_is_rejected() -> None:
    with pytest.raises(ValueError, match="negative offset"):
        PlotBlock("a", -1, 4, 0, 1)
    with pytest.raises(ValueError, match="before it starts"):
        PlotBlock("a", 0, 4, 3, 2)
    with pytest.raises(ValueError, match="negative capacity"):
        PlotLevel("L1", -5, ())


def test_file_names_are_sanitised_and_unique() -> None:
    levels = [PlotLevel(name, None, ()) for name in ("L2", "L2 ", "l2_", "../evil", "")]
    assert level_file_names(levels) == [
        "memory_L2.svg",
        "memory_L2_.svg",
        "memory_l2_-2.svg",
        "memory____evil.svg",
        "memory_level.svg",
    ]


def test_write_memory_plot(tmp_path: Path) -> None:
    levels = _three_levels()
    paths = write_memory_plot(tmp_path / "plots", "net", levels)
    assert [path.name for path in paths] == ["memory.html", "memory_L3.svg", "memory_L2.svg", "memory_L1.svg"]
    assert paths[0].read_text(encoding="utf-8") == memory_plot_html("net", levels)
    for index, (path, level) in enumerate(zip(paths[1:], levels)):
        assert path.read_text(encoding="utf-8") == memory_plot_svg(level, index=index)
        assert ET.parse(path).getroot().get("data-level") == level.name


# --- a real browser ----------------------------------------------------------------------------------------


def _hex_to_rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def test_chromium_screenshot_shows_every_level(tmp_path: Path) -> None:
    levels = _three_levels()
    page = write_memory_plot(tmp_path / "plot", "screenshot test", levels)[0]
    pixels = screenshot(page, tmp_path / "shot.png", 1200, 2400)
    assert pixels.shape[:2] == (2400, 1200)

    packed = (pixels[..., 0].astype(np.int32) << 16) | (pixels[..., 1].astype(np.int32) << 8) | pixels[..., 2]
    assert len(np.unique(packed)) > 20, "the screenshot has almost no colours: the page did not render"
    not_white = np.any(pixels < 250, axis=-1)
    assert not_white.mean() > 0.02, "the screenshot is (nearly) all white"

    rows_of_level = []
    for index, level in enumerate(levels):
        colour = np.array(_hex_to_rgb(LEVEL_FRAME_COLOURS[index]), dtype=np.int16)
        matches = np.all(np.abs(pixels - colour) <= 6, axis=-1)
        # A frame is a 4-pixel stroke around a ~770x320 plot: thousands of pixels, not a stray few.
        assert matches.sum() > 2000, f"frame colour {LEVEL_FRAME_COLOURS[index]} of {level.name} not on screen"
        rows_of_level.append(float(np.nonzero(matches)[0].mean()))
    assert rows_of_level == sorted(rows_of_level), "levels are not drawn in page order, top to bottom"


def _axis_top(svg: str) -> str:
    root = ET.fromstring(svg)
    [axis] = [group for group in root.iter(f"{SVG}g") if group.get("class") == "address-axis"]
    return [text.text for text in axis.iter(f"{SVG}text")][-1] or ""


def test_the_address_axis_is_scaled_to_the_buffers_when_the_capacity_dwarfs_them() -> None:
    """Issue 33 point 6: 13 KiB of buffers drawn against a 512 KiB L2 were an invisible sliver."""
    level = _level("L2", 512 << 10, 6, 2 << 10)  # peak 6 KiB
    svg = memory_plot_svg(level)
    assert _axis_top(svg) in ("7 KiB", "8 KiB"), _axis_top(svg)
    root = ET.fromstring(svg)
    [note] = [group for group in root.iter(f"{SVG}g") if group.get("class") == "capacity off-scale"]
    assert "".join(note.itertext()) == "capacity 524288 bytes, above the axis: 1.17 % used"
    assert _axis_top(memory_plot_svg(_level("L2", 8 << 10, 6, 2 << 10))) in ("9 KiB", "10 KiB", "12 KiB")


def test_the_page_lists_every_buffer_with_its_colour() -> None:
    levels = _three_levels()
    page = memory_plot_html("m.onnx on pulp-cluster (L1 65536 B, single buffering): static memory map", levels)
    for level in levels:
        for block in level.blocks:
            assert f'<tr class="buffer" data-buffer="{block.name}"><td><span class="swatch" ' \
                   f'style="background: {block_colour(block.name)}">' in page
    assert page.count('<tr class="buffer"') == sum(len(level.blocks) for level in levels)


def test_a_tiled_plot_is_titled_with_its_settings_and_labels_buffers_with_onnx_names(tiny_cnn: Path,
                                                                                     tmp_path: Path) -> None:
    """Issue 33 point 6: the page was titled "network" and the L1 blocks were named by C identifiers."""
    import importlib.util
    import re

    import onnx

    from deeploy_core.testing.terminal import run_piped

    if importlib.util.find_spec("deeploy_pulp_cluster") is None:
        pytest.skip("the cluster platform (plugins/pulp_cluster) is not installed")
    model = tiny_cnn
    done = run_piped("compile", str(model), "--platform", "pulp-cluster", "--l1", "16000", "--plot", "-o",
                     str(tmp_path / "out"), plugins="pulp-cluster")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "out" / "memory.html").read_text()
    assert "<title>tiny.onnx on pulp-cluster (L1 16000 B, single buffering, 8 cores): static memory map</title>" in page
    names = re.findall(r'<tr class="buffer" data-buffer="([^"]*)"', page)
    node_names = {node.name for node in onnx.load(model).graph.node}
    l1 = [name for name in names if name.split(" ")[0] in node_names]
    assert l1 and not any(name.startswith("dc_") for name in names), names
    assert any(name.startswith("conv1 in0 (") for name in l1), l1
