"""``profile.html``: time per layer next to memory per layer, one row per ONNX node.

The page is a table whose cells hold the bars: the browser lays out every
label in a cell of its own, so no name can run over a bar or another name at
any window width, down to an 80-column terminal's screenshot (about 640
pixels), and long node names wrap instead of leaving the page.  Each bar is
scaled to the largest value of its own kind, so a column always spans what
is drawn.  Like ``memory.html`` it is one self-contained file without script.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from deeploy_core.errors import DeeployError
from deeploy_core.report.layer_profile import LayerProfile, ProfileRow

GENERATOR = '<meta name="generator" content="deeploy_core profile">'
"""Marks a page this module wrote: only such a file is replaced by the next profile."""

TIME_COLOUR = "#1f77b4"
ESTIMATE_COLOUR = "#ff7f0e"
LIVE_COLOUR = "#2ca02c"
LEVEL_COLOUR = "#9467bd"

_STYLE = f"""
body {{ font-family: DejaVu Sans, Liberation Sans, Arial, sans-serif; margin: 16px; color: #222222;
       background: #ffffff; font-size: 13px; }}
h1 {{ font-size: 18px; margin: 0 0 8px 0; overflow-wrap: anywhere; }}
h2 {{ font-size: 15px; margin: 16px 0 6px 0; }}
p {{ margin: 0 0 6px 0; }}
table {{ border-collapse: collapse; width: 100%; }}
table.chart {{ table-layout: fixed; }}
th, td {{ padding: 3px 6px 3px 0; text-align: left; vertical-align: top; }}
table.chart td, td.name {{ overflow-wrap: anywhere; }}
tr {{ border-bottom: 1px solid #e5e5e5; }}
table.chart col.name {{ width: 34%; }}
td.number, th.number {{ text-align: right; font-variant-numeric: tabular-nums; }}
td.number {{ white-space: nowrap; }}
span.op {{ display: block; color: #666666; font-size: 11px; }}
div.bar {{ height: 9px; min-width: 1px; margin: 3px 0 0 0; }}
span.value {{ display: block; font-size: 11px; font-variant-numeric: tabular-nums; }}
span.key {{ display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px; }}
div.bar.time, span.key.time {{ background: {TIME_COLOUR}; }}
div.bar.estimate, span.key.estimate {{ background: {ESTIMATE_COLOUR}; }}
div.bar.live, span.key.live {{ background: {LIVE_COLOUR}; }}
div.bar.level, span.key.level {{ background: {LEVEL_COLOUR}; }}
""".strip()


_NUMBER = ' class="number"'
_NAME = ' class="name"'


def _text(value: object) -> str:
    return html.escape(str(value), quote=True)


def _bytes(count: int) -> str:
    return f"{count:,} B" if count < 10 * 1024 else f"{count / 1024:,.1f} KiB"


def _bar(kind: str, value: float, largest: float, caption: str) -> str:
    width = 100.0 * value / largest if largest > 0 else 0.0
    return f'<div class="bar {kind}" style="width: {width:.2f}%"></div><span class="value">{_text(caption)}</span>'


def _largest(profile: LayerProfile, measure: Callable[[ProfileRow], float | None]) -> float:
    return max((value for value in map(measure, profile.rows) if value is not None), default=0.0)


def _chart(profile: LayerProfile) -> list[str]:
    """Per row: the node and op, the time bars (and estimate), the memory bars."""
    longest = _largest(profile, lambda row: row.ns)
    most_cycles = _largest(profile, lambda row: row.estimated_cycles)
    most_live = _largest(profile, lambda row: row.live_bytes)
    most_level = _largest(profile, lambda row: row.level_bytes)
    level = profile.compute_level or "compute level"
    lines = ['<table class="chart">', '<colgroup><col class="name"><col><col></colgroup>',
             "<thead><tr><th>layer (ONNX node)</th><th>time</th><th>memory</th></tr></thead>", "<tbody>"]
    for row in profile.rows:
        time = _bar("time", row.ns, longest, f"{row.ns / 1e3:,.1f} µs ({profile.share(row):.1f}%)")
        if row.estimated_cycles is not None:
            time += _bar("estimate", row.estimated_cycles, most_cycles, f"{row.estimated_cycles:,} est. cycles")
        memory = _bar("live", row.live_bytes, most_live, f"{_bytes(row.live_bytes)} live in the arena")
        if row.level_bytes is not None:
            memory += _bar("level", row.level_bytes, most_level, f"{_bytes(row.level_bytes)} in {level}")
        lines.append(f'<tr><td class="name"><span class="node">{_text(row.label)}</span>'
                     f'<span class="op">{_text(row.op)}</span></td><td>{time}</td><td>{memory}</td></tr>')
    lines += ["</tbody>", "</table>"]
    return lines


def _details(profile: LayerProfile) -> list[str]:
    """The numbers behind the bars, with the kernel and MACs."""
    heads = ["layer", "kernel", "MACs", "µs", "%"] + (["est. cycles", "MAC/cycle (est.)"] if profile.has_estimate else [])
    lines = ['<table class="details">', "<thead><tr>" + "".join(
        f'<th{_NUMBER if index >= 2 else ""}>{_text(head)}</th>' for index, head in enumerate(heads))
        + "</tr></thead>", "<tbody>"]
    for row in profile.rows:
        cells = [row.short_label, row.kernel, f"{row.macs:,}", f"{row.ns / 1e3:,.1f}", f"{profile.share(row):.1f}"]
        if profile.has_estimate:
            cells += row.estimate_cells
        lines.append("<tr>" + "".join(f'<td{_NUMBER if index >= 2 else _NAME if index == 0 else ""}>{_text(cell)}</td>'
                                      for index, cell in enumerate(cells)) + "</tr>")
    lines += ["</tbody>", "</table>"]
    return lines


def _legend(profile: LayerProfile) -> str:
    keys = [("time", "measured time on this host")]
    if profile.has_estimate:
        keys.append(("estimate", f"{profile.platform}'s cost model: estimated cycles on the target"))
    keys.append(("live", "activation bytes alive in the arena while the layer runs"))
    if any(row.level_bytes is not None for row in profile.rows):
        keys.append(("level", f"the tiled layer's bytes in {profile.compute_level or 'the compute level'}"))
    return "<p>" + "".join(f'<span class="key {kind}"></span>{_text(text)}' for kind, text in keys) + "</p>"


def profile_title(profile: LayerProfile) -> str:
    return f"Per-layer profile of {profile.network} on {profile.platform}{profile.settings}"


def profile_html(profile: LayerProfile) -> str:
    """The page for ``profile``."""
    title = profile_title(profile)
    summary = (f"Best of {profile.repeats} run(s) per layer; the layers take {profile.total_ns / 1e3:,.1f} µs in "
               f"all. Each bar is scaled to the largest of its kind.")
    if any(row.fused for row in profile.rows):
        summary += " Layers joined by → run in one fused tile loop and are timed together."
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">', GENERATOR,
        '<meta name="viewport" content="width=device-width, initial-scale=1">', f"<title>{_text(title)}</title>",
        f"<style>\n{_STYLE}\n</style>", "</head>", "<body>", f"<h1>{_text(title)}</h1>",
        f"<p>{_text(summary)}</p>", _legend(profile), *_chart(profile), "<h2>Figures</h2>", *_details(profile),
        "</body>", "</html>",
    ]) + "\n"


def write_profile_page(path: Path, profile: LayerProfile) -> Path:
    """Write ``profile.html`` at ``path``; a file there that this module did not write is never replaced."""
    if path.exists():
        if path.is_dir():
            raise DeeployError(f"--profile-html {path} is a folder: give a file name, e.g. {path / 'profile.html'}")
        head = path.read_text(encoding="utf-8", errors="replace")[:2000]
        if GENERATOR not in head:
            raise DeeployError(f"{path} exists and is not a profile page written by deeploy-core: it is left as it is; "
                               f"choose another file with --profile-html")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(profile_html(profile), encoding="utf-8", newline="\n")
    return path
