"""profile.html laid out by Chromium at the width of an 80-column terminal's screenshot (issue 33): every label
readable, none over another or over a bar, nothing wider than the window, and every kind of bar drawn."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np

from deeploy_core.report.layer_profile import LayerProfile, ProfileRow
from deeploy_core.report.profile_page import (ESTIMATE_COLOUR, LEVEL_COLOUR, LIVE_COLOUR, TIME_COLOUR, profile_html,
                                              profile_title)
from tests.browser import rendered_dom, screenshot

WIDTH = 640
"""80 columns of an 8-pixel terminal font."""

MEASURE = """
<script>
function rects(el) {
  var range = document.createRange(); range.selectNodeContents(el);
  return Array.prototype.filter.call(range.getClientRects(), function (r) { return r.width > 0 && r.height > 0; })
    .map(function (r) { return [r.left, r.top, r.right, r.bottom]; });
}
var texts = [];
document.querySelectorAll("h1, h2, p, th, span.node, span.op, span.value, table.details td").forEach(
  function (el, index) { rects(el).forEach(function (r) { texts.push({id: index, box: r, text: el.textContent}); }); });
var bars = Array.prototype.map.call(document.querySelectorAll("div.bar"), function (bar) {
  var b = bar.getBoundingClientRect(), cell = bar.parentElement.getBoundingClientRect();
  return {box: [b.left, b.top, b.right, b.bottom], cell: [cell.left, cell.top, cell.right, cell.bottom]}; });
var pre = document.createElement("pre"); pre.id = "geometry";
pre.textContent = JSON.stringify({texts: texts, bars: bars, scroll: document.documentElement.scrollWidth,
                                  client: document.documentElement.clientWidth});
document.body.appendChild(pre);
</script>
"""


def sample_profile() -> LayerProfile:
    """Long ONNX names (exporters write paths), a fused run, cost-model cycles and L1 bytes: what a tiled
    cluster build of a real network shows."""
    rows = [
        ProfileRow(("/features/features.0/features.0.0/Conv", "/features/features.0/features.0.2/Relu"),
                   ("Conv", "Relu"), ("Conv float32", "Relu float32"), 1_769_472, 1_250_000.0, 196_608, 61_440,
                   410_000, (0, 1)),
        ProfileRow(("/features/features.3/block/block.1/fc1/Conv_with_a_name_longer_than_the_column",),
                   ("Conv",), ("Conv float32",), 4_096, 2_400.0, 8_192, 4_096, 2_100, (2,)),
        ProfileRow(("/classifier/classifier.1/Gemm",), ("Gemm",), ("Gemm float32",), 12_800, 38_000.0, 2_048, 1_024,
                   9_600, (3,)),
        ProfileRow(("/Reshape",), ("Reshape",), ("Reshape (alias)",), 0, 40.0, 2_048, None, None, (4,)),
    ]
    return LayerProfile("mobilenet_v2_035.onnx", "pulp-cluster", " (L1 65536 B, double buffering, 8 cores)",
                        tuple(rows), 10, "L1")


def boxes_meet(a: list[float], b: list[float], slack: float = 0.5) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def test_labels_fit_an_80_column_screenshot_without_overlaps(tmp_path: Path) -> None:
    profile = sample_profile()
    page = tmp_path / "profile.html"
    page.write_text(profile_html(profile).replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = rendered_dom(page, WIDTH, 1200)
    geometry = json.loads(re.search(r'<pre id="geometry">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"')
                          .replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    assert geometry["scroll"] <= geometry["client"] <= WIDTH, "the page is wider than the window"
    texts = geometry["texts"]
    for text in texts:
        assert 0 <= text["box"][0] and text["box"][2] <= WIDTH, text
    for first, second in itertools.combinations(texts, 2):
        if first["id"] != second["id"]:
            assert not boxes_meet(first["box"], second["box"]), (first, second)
    assert len(geometry["bars"]) == 4 + 3 + 4 + 3  # time, estimate, live bytes, L1 bytes (none for the alias)
    for bar in geometry["bars"]:
        assert bar["cell"][0] <= bar["box"][0] and bar["box"][2] <= bar["cell"][2] + 0.5, bar
        for text in texts:
            assert not boxes_meet(bar["box"], text["box"]), (bar, text)
    names = "".join(text["text"] for text in texts)
    for row in profile.rows:
        for node in row.nodes:
            assert node in names


def test_the_screenshot_shows_every_kind_of_bar_and_the_title_says_what_was_run(tmp_path: Path) -> None:
    profile = sample_profile()
    page = tmp_path / "profile.html"
    page.write_text(profile_html(profile), encoding="utf-8")
    pixels = screenshot(page, tmp_path / "profile.png", WIDTH, 900)
    for colour in (TIME_COLOUR, ESTIMATE_COLOUR, LIVE_COLOUR, LEVEL_COLOUR):
        rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
        assert (np.abs(pixels - rgb).max(axis=2) <= 2).sum() > 50, f"no {colour} bar on the screenshot"
    title = profile_title(profile)
    assert title == "Per-layer profile of mobilenet_v2_035.onnx on pulp-cluster (L1 65536 B, double buffering, 8 cores)"
    assert f"<title>{title}</title>" in page.read_text()


def test_each_bar_is_scaled_to_the_largest_of_its_kind() -> None:
    text = profile_html(sample_profile())
    widths = {kind: [float(w) for w in re.findall(rf'class="bar {kind}" style="width: ([\d.]+)%"', text)]
              for kind in ("time", "estimate", "live", "level")}
    assert {kind: max(values) for kind, values in widths.items()} == {kind: 100.0 for kind in widths}
    assert widths["time"][1] == round(100 * 2_400 / 1_250_000, 2)
