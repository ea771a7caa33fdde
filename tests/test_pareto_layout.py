"""pareto.html laid out by Chromium (issue 33 point 9): labels inside the plot, clear of each other and of the
Pareto staircase, enough y ticks, the full page width, and a word on points that pay more memory for more cycles."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from deeploy_core.sweep.pareto import pareto_html
from tests.browser import rendered_dom
from tests.support.sweep_records import sweep_records

MEASURE = """
<script>
var out = [];
document.querySelectorAll("svg.pareto").forEach(function (svg) {
  var area = svg.querySelector("rect.plot-area").getBBox();
  var labels = Array.prototype.map.call(svg.querySelectorAll("text.label"), function (t) {
    var b = t.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height, t.textContent]; });
  var line = svg.querySelector("polyline.front-line").getAttribute("points").trim().split(/\\s+/).map(
    function (p) { return p.split(",").map(Number); });
  var ticks = svg.querySelectorAll("text.tick").length;
  out.push({area: [area.x, area.y, area.x + area.width, area.y + area.height], labels: labels, line: line,
            ticks: ticks, width: svg.getBoundingClientRect().width});
});
var pre = document.createElement("pre"); pre.id = "geometry"; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>
"""


def boxes_meet(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_labels_stay_inside_and_clear_of_each_other_and_of_the_front(tmp_path: Path) -> None:
    page, _ = pareto_html("sweep of miniMobileNet on pulp-cluster", {"miniMobileNet": sweep_records()})
    assert "use more memory and still as many or more cycles" in page
    path = tmp_path / "pareto.html"
    path.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = rendered_dom(path, 1400, 1600)
    [geometry] = json.loads(re.search(r'<pre id="geometry">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    area, labels, line = geometry["area"], geometry["labels"], geometry["line"]
    assert len(labels) == 12
    for label in labels:
        assert area[0] <= label[0] and label[2] <= area[2] and area[1] <= label[1] and label[3] <= area[3], label
    for first, second in itertools.combinations(labels, 2):
        assert not boxes_meet(first, second), (first, second)
    segments = [[min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1])] for a, b in zip(line, line[1:])]
    for label in labels:
        for segment in segments:
            assert not boxes_meet(label, segment), (label, segment)
    assert geometry["ticks"] >= 10, "too few ticks on the axes"
    assert geometry["width"] > 1000, "the plot takes the page's width, not half of it"
