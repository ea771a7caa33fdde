"""``pareto.html``: memory against estimated cycles per network, the Pareto front highlighted.

One self-contained page (inline SVG, CSS and a few lines of script that link
a marker to its table row; no URI is ever fetched), one section per network:

* a scatter plot of the points that compiled, memory on x and estimated
  cycles on y (compile time where the platform estimates no cycles; the axis
  says which; :mod:`deeploy_core.sweep.figures` defines both).  Points on the
  Pareto front — no other point has both less or equal memory and fewer or
  equal cycles, and is better in one — are red and joined by a staircase
  line; every marker is labelled with the values of the options that vary in
  that network (the legend above names them), and points with the same
  figures share one marker and list every option set;
* a table of every point, infeasible and failed ones too, with its options,
  figures, front membership and message.

Output is deterministic: points sorted by their options, coordinates printed
with fixed precision.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deeploy_core.sweep.figures import CYCLES_LABEL, MEMORY_DEFINITION, SECONDS_LABEL

FRONT_COLOUR = "#d62728"
POINT_COLOUR = "#5b7083"
WIDTH, HEIGHT = 960, 470
LEFT, RIGHT, TOP, BOTTOM = 96, 936, 24, 410
"""The plot area inside the SVG; labels stay inside it.  The page scales the SVG to its width."""
FONT = 11.0

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: object) -> str:
    """Escape for HTML/SVG text and quoted attributes (characters XML cannot hold become U+FFFD)."""
    return html.escape(_XML_INVALID.sub("\ufffd", str(value)), quote=True)


def _num(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def pareto_front(points: Sequence[tuple[float, float]]) -> list[bool]:
    """Whether each (x, y) is on the front of minimising both (a point equal to a front point is on it too)."""
    return [not any(ox <= x and oy <= y and (ox < x or oy < y) for ox, oy in points) for x, y in points]


def options_text(options: Mapping[str, Any]) -> str:
    """``l1=8192 buffering=single``."""
    return " ".join(f"{key}={value}" for key, value in options.items())


def _sort_key(record: Mapping[str, Any]) -> tuple[tuple[str, float, str], ...]:
    return tuple((key, value if isinstance(value, (int, float)) else math.inf, str(value))
                 for key, value in record.get("options", {}).items())


@dataclass(frozen=True)
class _Marker:
    x: float
    y: float
    rows: tuple[int, ...]
    labels: tuple[str, ...]
    titles: tuple[str, ...]
    front: bool


def _nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """1-2-5 steps covering [low, high]."""
    span = high - low
    raw = span / max(1, count - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(factor * magnitude for factor in (1, 2, 5, 10) if factor * magnitude >= raw)
    first = math.floor(low / step) * step
    return [first + index * step for index in range(int(math.ceil((high - first) / step + 1e-9)) + 1)]


def _compact(value: float) -> str:
    """Tick label: 16384 -> 16.4k, 1.2e6 -> 1.2M, 0.25 -> 0.25."""
    for unit, factor in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= factor:
            return f"{value / factor:.3g}{unit}"
    return f"{value:.3g}"


def _range(values: list[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    if high == low:
        pad = abs(high) * 0.1 or 1.0
        return low - pad, high + pad
    pad = (high - low) * 0.08
    return max(0.0, low - pad) if low >= 0 else low - pad, high + pad


SIDES = ("right", "left", "above", "below", "above-right", "below-right", "above-left", "below-left")


def _label_box(x: float, y: float, lines: tuple[str, ...], side: str,
               gap: float = 8.0) -> tuple[float, float, float, float]:
    """Where a marker's label goes on ``side`` of it, ``gap`` away, kept inside the plot area (never over its
    frame)."""
    width = max(len(line) for line in lines) * FONT * 0.66
    height = len(lines) * (FONT + 3)
    horizontal = {"right": x + gap, "left": x - gap - width}.get(side.split("-")[-1], x - width / 2)
    vertical = {"above": y - gap - height, "below": y + gap}.get(side.split("-")[0], y - height / 2)
    left = min(max(horizontal, LEFT + 2.0), RIGHT - 2 - width)
    top = min(max(vertical, TOP + 2.0), BOTTOM - 2 - height)
    return left, top, left + width, top + height


def _segment_boxes(steps: list[tuple[float, float]]) -> list[tuple[float, float, float, float]]:
    """The staircase's segments as thin boxes, so that no label is written across the front line."""
    return [(min(a[0], b[0]) - 2, min(a[1], b[1]) - 2, max(a[0], b[0]) + 2, max(a[1], b[1]) + 2)
            for a, b in zip(steps, steps[1:])]


def _overlaps(box: tuple[float, float, float, float], others: list[tuple[float, float, float, float]]) -> bool:
    return any(box[0] < o[2] and o[0] < box[2] and box[1] < o[3] and o[1] < box[3] for o in others)


def _scatter_svg(markers: list[_Marker], x_label: str, y_label: str, section: int) -> str:
    xs, ys = [m.x for m in markers], [m.y for m in markers]
    (x_low, x_high), (y_low, y_high) = _range(xs), _range(ys)
    x_ticks = [t for t in _nice_ticks(x_low, x_high, 8) if x_low <= t <= x_high]
    y_ticks = [t for t in _nice_ticks(y_low, y_high, 9) if y_low <= t <= y_high]

    def px(value: float) -> float:
        return LEFT + (value - x_low) / (x_high - x_low) * (RIGHT - LEFT)

    def py(value: float) -> float:
        return BOTTOM - (value - y_low) / (y_high - y_low) * (BOTTOM - TOP)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="pareto" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img">',
           f'<rect class="plot-area" x="{LEFT}" y="{TOP}" width="{RIGHT - LEFT}" height="{BOTTOM - TOP}" '
           'fill="#fbfbfd" stroke="#999"/>']
    for tick in x_ticks:
        out.append(f'<line class="grid" x1="{_num(px(tick))}" y1="{TOP}" x2="{_num(px(tick))}" y2="{BOTTOM}"/>'
                   f'<text class="tick" x="{_num(px(tick))}" y="{BOTTOM + 16}" text-anchor="middle">'
                   f'{_text(_compact(tick))}</text>')
    for tick in y_ticks:
        out.append(f'<line class="grid" x1="{LEFT}" y1="{_num(py(tick))}" x2="{RIGHT}" y2="{_num(py(tick))}"/>'
                   f'<text class="tick" x="{LEFT - 6}" y="{_num(py(tick) + 4)}" text-anchor="end">'
                   f'{_text(_compact(tick))}</text>')
    out.append(f'<text class="axis" x="{(LEFT + RIGHT) / 2:.0f}" y="{HEIGHT - 18}" text-anchor="middle">'
               f'{_text(x_label)}</text>')
    out.append(f'<text class="axis" transform="translate(18 {(TOP + BOTTOM) / 2:.0f}) rotate(-90)" '
               f'text-anchor="middle">{_text(y_label)}</text>')
    front = sorted((m for m in markers if m.front), key=lambda m: (m.x, -m.y))
    steps: list[tuple[float, float]] = []
    for marker in front:
        if steps:
            steps.append((px(marker.x), steps[-1][1]))
        steps.append((px(marker.x), py(marker.y)))
    points = " ".join(f"{_num(x)},{_num(y)}" for x, y in steps)
    out.append(f'<polyline class="front-line" points="{points}" fill="none" stroke="{FRONT_COLOUR}" '
               'stroke-width="2.5" stroke-dasharray="6 3"/>')
    boxes: list[tuple[float, float, float, float]] = _segment_boxes(steps)
    # Front markers are labelled first, so that theirs get the free places.
    for marker in sorted(markers, key=lambda m: (not m.front, m.x, m.y)):
        x, y = px(marker.x), py(marker.y)
        boxes.append((x - 7, y - 7, x + 7, y + 7))
    labels: list[str] = []
    for marker in sorted(markers, key=lambda m: (not m.front, m.x, m.y)):
        x, y = px(marker.x), py(marker.y)
        # The nearest free place, farther out when every side is taken; else the least crowded one.
        places = [(float(gap), side) for gap in range(8, 260, 12) for side in SIDES]
        gap, side = next((place for place in places
                          if not _overlaps(_label_box(x, y, marker.labels, place[1], place[0]), boxes)),
                         min(places, key=lambda place: sum(_overlaps(_label_box(x, y, marker.labels, place[1],
                                                                                 place[0]), [box]) for box in boxes)))
        box = _label_box(x, y, marker.labels, side, gap)
        boxes.append(box)
        kind = "point front" if marker.front else "point"
        rows = " ".join(f"row-{section}-{row}" for row in marker.rows)
        title = "\n".join(marker.titles)
        colour, radius = (FRONT_COLOUR, 6.5) if marker.front else (POINT_COLOUR, 4.5)
        group = [f'<g class="{kind}" data-rows="{rows}">',
                 f'<title>{_text(title)}</title>',
                 f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{radius}" fill="{colour}" stroke="#fff" stroke-width="1.5"/>']
        if gap > 8:  # a label pushed away by others keeps a thin line to its marker
            near_x, near_y = min(max(x, box[0]), box[2]), min(max(y, box[1]), box[3])
            group.append(f'<line class="leader" x1="{_num(x)}" y1="{_num(y)}" x2="{_num(near_x)}" '
                         f'y2="{_num(near_y)}" stroke="#999" stroke-width="0.75"/>')
        for index, line in enumerate(marker.labels):
            group.append(f'<text class="label" x="{_num(box[0])}" y="{_num(box[1] + FONT + index * (FONT + 3))}">'
                         f'{_text(line)}</text>')
        group.append("</g>")
        labels.append("".join(group))
    out.extend(labels)
    out.append("</svg>")
    return "\n".join(out)


def _more_memory_more_cycles(ok: list[tuple[int, Mapping[str, Any]]], coordinates: list[tuple[float, float]],
                             on_front: list[bool]) -> str:
    """Why some points cost more for more memory, naming one such pair, or "" when there is none."""
    pairs = [(row, front_row) for (row, _), (x, y), front in zip(ok, coordinates, on_front) if not front
             for (front_row, _), (fx, fy), other in zip(ok, coordinates, on_front)
             if other and fx < x and fy <= y]
    if not pairs:
        return ""
    rows = sorted({row for row, _ in pairs})
    row, front_row = pairs[0]
    return (f"{len(rows)} point(s) use more memory and still as many or more cycles than a point on the front "
            f"(#{row} against #{front_row}): with more memory the tiler takes fewer, larger tiles, since its objective "
            f"is the fewest tiles, not the fewest cycles; larger tiles can split less evenly over the cores or hide "
            f"less transfer behind computation.  Such points are never worth their memory.")


def _varying(records: Sequence[Mapping[str, Any]]) -> list[str]:
    keys: list[str] = []
    for record in records:
        keys += [key for key in record.get("options", {}) if key not in keys]
    return [key for key in keys if len({repr(record.get("options", {}).get(key)) for record in records}) > 1]


def _network_section(name: str, records: Sequence[Mapping[str, Any]], section: int) -> tuple[str, int]:
    """The section of one network, and how many points are on its front."""
    records = sorted(records, key=_sort_key)
    varying = _varying(records) or list(records[0].get("options", {})) if records else []
    ok = [(row, record) for row, record in enumerate(records, start=1) if record.get("status") == "ok"]
    use_cycles = bool(ok) and all(record["figures"].get("estimated_cycles") is not None for _, record in ok)
    y_name, y_label = ("estimated_cycles", CYCLES_LABEL) if use_cycles else ("compile_seconds", SECONDS_LABEL)
    coordinates = [(float(record["figures"]["memory_bytes"]), float(record["figures"][y_name])) for _, record in ok]
    on_front = pareto_front(coordinates)
    front_rows = {row for (row, _), front in zip(ok, on_front) if front}
    grouped: dict[tuple[float, float], list[tuple[int, Mapping[str, Any], bool]]] = {}
    for (row, record), xy, front in zip(ok, coordinates, on_front):
        grouped.setdefault(xy, []).append((row, record, front))
    markers = [
        _Marker(x, y, tuple(row for row, _, _ in group),
                tuple(" / ".join(str(record["options"].get(key, "")) for key in varying) or f"#{row}"
                      for row, record, _ in group),
                tuple(f"#{row} {options_text(record['options'])}: memory {int(x)} B, {y_name} {y:g}"
                      for row, record, _ in group),
                any(front for _, _, front in group))
        for (x, y), group in sorted(grouped.items())
    ]
    counts = {status: sum(1 for record in records if record.get("status") == status)
              for status in ("ok", "infeasible", "error")}
    parts = [f'<section class="network" data-network="{_text(name)}">', f"<h2>{_text(name)}</h2>",
             f'<p class="summary">{len(records)} points: {counts["ok"]} ok ({len(front_rows)} on the Pareto front), '
             f'{counts["infeasible"]} infeasible, {counts["error"]} error. Labels: '
             f'{_text(" / ".join(varying) or "point number")}.</p>']
    if markers:
        parts.append(_scatter_svg(markers, "memory (bytes): sum of the level peaks", y_label, section))
        worse = _more_memory_more_cycles(ok, coordinates, on_front)
        if worse:
            parts.append(f'<p class="dominated">{_text(worse)}</p>')
    else:
        parts.append('<p class="empty">No point compiled: nothing to plot.</p>')
    parts.append('<table><thead><tr><th>#</th><th>options</th><th>status</th><th>memory (B)</th>'
                 f'<th>{"estimated cycles" if use_cycles else "compile s"}</th><th>front</th><th>message</th>'
                 '</tr></thead><tbody>')
    for row, record in enumerate(records, start=1):
        figures = record.get("figures", {})
        status = str(record.get("status"))
        memory = figures.get("memory_bytes", "") if status == "ok" else ""
        y_value = figures.get(y_name, "") if status == "ok" else ""
        parts.append(f'<tr id="row-{section}-{row}" class="{_text(status)}{" front" if row in front_rows else ""}">'
                     f"<td>{row}</td><td>{_text(options_text(record.get('options', {})))}</td>"
                     f"<td>{_text(status)}</td><td>{_text(memory)}</td><td>{_text(y_value)}</td>"
                     f"<td>{'yes' if row in front_rows else ''}</td><td>{_text(record.get('message', ''))}</td></tr>")
    parts.append("</tbody></table></section>")
    return "\n".join(parts), len(front_rows)


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; }
p.definitions { font-size: 13px; color: #444; max-width: 960px; }
svg.pareto { display: block; margin: 8px 0; width: 100%; max-width: 1600px; height: auto; }
p.dominated { font-size: 13px; color: #444; max-width: 960px; }
svg .grid { stroke: #e3e3ea; stroke-width: 1; }
svg .tick { font-size: 11px; fill: #444; }
svg .axis { font-size: 12px; fill: #222; }
svg .label { font-size: 11px; fill: #333; font-family: ui-monospace, monospace; }
svg .point.front .label { fill: #a01010; font-weight: bold; }
svg .point.hot circle { stroke: #000; stroke-width: 3; }
table { border-collapse: collapse; font-size: 12px; margin-top: 8px; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
tr.front td { background: #fde8e8; }
tr.infeasible td { color: #8a6d00; } tr.error td { color: #b00; }
tr.hot td { outline: 2px solid #000; }
"""

_SCRIPT = """
document.querySelectorAll("svg.pareto .point").forEach(function (point) {
  var rows = point.getAttribute("data-rows").split(" ").map(function (id) { return document.getElementById(id); });
  function hot(on) {
    point.classList.toggle("hot", on);
    rows.forEach(function (row) { if (row) { row.classList.toggle("hot", on); } });
  }
  point.addEventListener("mouseenter", function () { hot(true); });
  point.addEventListener("mouseleave", function () { hot(false); });
  rows.forEach(function (row) {
    if (row) {
      row.addEventListener("mouseenter", function () { hot(true); });
      row.addEventListener("mouseleave", function () { hot(false); });
    }
  });
});
"""


def pareto_html(title: str, networks: Mapping[str, Sequence[Mapping[str, Any]]]) -> tuple[str, dict[str, int]]:
    """The page for ``networks`` (name → records), and each network's number of front points."""
    fronts: dict[str, int] = {}
    sections = []
    for index, (name, records) in enumerate(networks.items(), start=1):
        text, fronts[name] = _network_section(name, records, index)
        sections.append(text)
    total = sum(len(records) for records in networks.values())
    page = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_text(title)}</title>", f"<style>{_STYLE}</style>", "</head>", "<body>",
        f"<h1>{_text(title)}</h1>",
        f'<p class="definitions">{total} points in {len(networks)} network{"s" if len(networks) != 1 else ""}. '
        f"x: {_text(MEMORY_DEFINITION)}. y: {_text(CYCLES_LABEL)}, or {_text(SECONDS_LABEL)}. "
        f'Red markers joined by the dashed staircase are the Pareto front (lower is better on both axes); '
        f"hover a marker or a row to find its partner.</p>",
        *sections,
        f"<script>{_SCRIPT}</script>", "</body>", "</html>",
    ]
    return "\n".join(page) + "\n", fronts
