"""Static memory-map plots: where each buffer lives in a memory level, and when.

A memory planner's output is a list of numbers (offsets, sizes, lifetimes) that
is hard to judge by reading; a picture shows at a glance whether a level is
nearly full, where fragmentation sits and whether two buffers overlap. This
module draws such a picture for each memory level as a plain SVG, and puts
them together in one HTML page.

The output is deliberately static and self-contained (no scripts, no fonts or
styles from the network) so that it can be opened from a build directory,
attached to a CI artifact or committed, and it is byte-for-byte deterministic
so that two compilations of the same network produce identical files.

The drawing takes plain data (:class:`PlotLevel` and :class:`PlotBlock`)
rather than the compiler's own memory-plan objects, so that it has no opinion
about how the plan was made and can be tested on its own.
"""

from __future__ import annotations

import colorsys
import hashlib
import html
import math
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "LEVEL_FRAME_COLOURS",
    "PlotBlock",
    "PlotLevel",
    "block_colour",
    "level_file_names",
    "level_frame_colour",
    "memory_plot_html",
    "memory_plot_svg",
    "write_memory_plot",
]

#: Frame (and heading) colour of each level, by the level's position in the page.
#:
#: Every level gets its own colour so that a reader, and a screenshot test,
#: can tell the levels apart. The colours are saturated and dark (one channel
#: at most 0x30), while buffer fills are light pastels (every channel at least
#: about 0x78), so a frame colour never coincides with a buffer's. A page with
#: more levels than colours reuses them from the start.
LEVEL_FRAME_COLOURS: tuple[str, ...] = (
    "#1f4e9c",  # blue
    "#b3261e",  # red
    "#18794e",  # green
    "#7b2cbf",  # purple
    "#b35900",  # orange
    "#00838f",  # teal
    "#9c1f6e",  # magenta
    "#4d5b00",  # olive
)

_SVG_NAMESPACE = "http://www.w3.org/2000/svg"

# Geometry of one level's picture, in CSS pixels. Fixed sizes keep the output
# deterministic and the pages of different networks comparable side by side.
_WIDTH = 880
_HEIGHT = 420
_MARGIN_LEFT = 84
_MARGIN_RIGHT = 28
_MARGIN_TOP = 52
_MARGIN_BOTTOM = 52
_PLOT_LEFT = _MARGIN_LEFT
_PLOT_TOP = _MARGIN_TOP
_PLOT_WIDTH = _WIDTH - _MARGIN_LEFT - _MARGIN_RIGHT
_PLOT_HEIGHT = _HEIGHT - _MARGIN_TOP - _MARGIN_BOTTOM
_PLOT_RIGHT = _PLOT_LEFT + _PLOT_WIDTH
_PLOT_BOTTOM = _PLOT_TOP + _PLOT_HEIGHT

#: The address axis reaches the capacity only when it is at most this many times the peak; above that the
#: capacity is written, not drawn, and the axis ends at the peak.
CAPACITY_ON_SCALE = 2.0

# Even width at integer coordinates: the stroke covers whole pixels, so its
# colour is drawn exactly (no anti-aliasing blend) and can be found in a screenshot.
_FRAME_STROKE = 4
_MAX_ADDRESS_TICKS = 8
_MAX_TIME_TICKS = 12
_FONT = "DejaVu Sans, Liberation Sans, Arial, sans-serif"

# XML 1.0 forbids these characters even as character references, and lone
# surrogates cannot be encoded as UTF-8; a user-chosen name containing them
# would otherwise make the whole file unreadable.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


@dataclass(frozen=True)
class PlotBlock:
    """A buffer occupying bytes ``[offset, offset + size)`` during time steps ``[start, end)``.

    Time steps are whatever the caller counts in (usually layer indices); both
    intervals are half-open, so a buffer written by step 3 and last read by
    step 5 has ``start=3, end=6``.
    """

    name: str
    offset: int
    size: int
    start: int
    end: int

    def __post_init__(self) -> None:
        """Reject geometry that cannot be drawn, so a planner bug shows up here and not as a garbled picture."""
        if self.offset < 0:
            raise ValueError(f"buffer {self.name!r}: negative offset {self.offset}")
        if self.size < 0:
            raise ValueError(f"buffer {self.name!r}: negative size {self.size}")
        if self.end < self.start:
            raise ValueError(f"buffer {self.name!r}: lifetime ends ({self.end}) before it starts ({self.start})")


@dataclass(frozen=True)
class PlotLevel:
    """One memory level (e.g. L3, L2, L1) and the buffers placed in it.

    ``capacity`` is the level's size in bytes, or ``None`` when the platform
    does not bound it (then no capacity line is drawn).
    """

    name: str
    capacity: int | None
    blocks: tuple[PlotBlock, ...]

    def __post_init__(self) -> None:
        """A negative capacity is certainly a mistake by the caller; say so early."""
        if self.capacity is not None and self.capacity < 0:
            raise ValueError(f"level {self.name!r}: negative capacity {self.capacity}")

    @property
    def peak(self) -> int:
        """Highest byte address used plus one: how much of the level the placement needs.

        This is the number to hold against ``capacity``; it is at least the
        peak of simultaneously live bytes, more when the placement leaves gaps.
        """
        return max((block.offset + block.size for block in self.blocks), default=0)


def _text(value: str) -> str:
    """Escape a user-controlled string for XML/HTML text and (double- or single-quoted) attributes."""
    return html.escape(_XML_INVALID.sub("\ufffd", value), quote=True)


def _number(value: float) -> str:
    """Format a coordinate with fixed precision, so the same input always gives the same characters."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _format_bytes(value: int) -> str:
    """Short axis label: binary units when exact (tick values are multiples of powers of two)."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= factor and value % factor == 0:
            return f"{value // factor} {unit}"
    return f"{value} B"


def block_colour(name: str) -> str:
    """Fill colour of a buffer, derived from its name.

    A cryptographic hash (not Python's ``hash()``, which is salted per process)
    keeps colours stable across runs and machines, so the same buffer has the
    same colour in every plot of every level. Lightness stays high so that
    black text reads on it and it never matches a :data:`LEVEL_FRAME_COLOURS` entry.
    """
    digest = hashlib.sha256(_XML_INVALID.sub("\ufffd", name).encode("utf-8")).digest()
    hue = int.from_bytes(digest[0:2], "big") / 65536.0
    lightness = 0.70 + digest[2] / 255.0 * 0.10
    saturation = 0.45 + digest[3] / 255.0 * 0.20
    red, green, blue = colorsys.hls_to_rgb(hue, lightness, saturation)
    return "#{:02x}{:02x}{:02x}".format(*(round(channel * 255) for channel in (red, green, blue)))


def level_frame_colour(index: int) -> str:
    """Frame colour of the level at ``index`` in the page (the palette repeats past its end)."""
    return LEVEL_FRAME_COLOURS[index % len(LEVEL_FRAME_COLOURS)]


def _address_ticks(extent: int) -> tuple[int, int]:
    """Tick step and axis top for addresses ``[0, extent]``.

    Steps are powers of two, which is how memory sizes are usually thought of,
    and the axis reaches a little past ``extent`` so that a capacity line at
    the very top stays visible instead of hiding behind the frame.
    """
    target = max(1, math.ceil(extent * 1.05))
    step = 1
    while math.ceil(target / step) > _MAX_ADDRESS_TICKS:
        step *= 2
    return step, max(step, math.ceil(target / step) * step)


def _time_ticks(span: int) -> int:
    """A 1-2-5 tick step for ``span`` time steps, keeping the axis readable for long networks."""
    magnitude = 1
    while True:
        for factor in (1, 2, 5):
            step = factor * magnitude
            if span / step <= _MAX_TIME_TICKS:
                return step
        magnitude *= 10


def _text_width(text: str, font_size: float) -> float:
    """Rough rendered width, erring wide, to decide whether a label fits inside its buffer."""
    return sum(font_size * (0.65 if ord(char) < 128 else 1.1) for char in text)


def _block_title(block: PlotBlock) -> str:
    """Tooltip text of a buffer: everything needed to find it in the memory plan."""
    return (
        f"{block.name}: offset {block.offset}, size {block.size} bytes, "
        f"live in steps [{block.start}, {block.end})"
    )


def memory_plot_svg(level: PlotLevel, *, index: int = 0) -> str:
    """Draw one memory level as a standalone SVG document: time on x, address on y (0 at the bottom).

    ``index`` is the level's position in the page and picks its frame colour
    from :data:`LEVEL_FRAME_COLOURS`. Each buffer is a ``rect`` of class
    ``block`` with a ``title`` tooltip; the root ``svg`` carries the level name
    in ``data-level``. Buffers are drawn slightly translucent so that an
    overlap (a planner bug) stays visible.
    """
    frame = level_frame_colour(index)
    blocks = sorted(level.blocks, key=lambda b: (b.start, b.offset, b.end, b.size, b.name))

    time_first = min([0] + [block.start for block in blocks])
    time_last = max([time_first + 1] + [block.end for block in blocks])
    time_span = time_last - time_first
    capacity_drawn = level.capacity is not None and (not blocks or level.capacity <= CAPACITY_ON_SCALE * level.peak)
    # Scaled to what is drawn: 13 KiB of buffers under a 512 KiB capacity would be a sliver along the axis.
    address_step, address_top = _address_ticks(max(level.peak, level.capacity or 0) if capacity_drawn
                                               else level.peak)

    def x_of(step: float) -> float:
        return _PLOT_LEFT + (step - time_first) / time_span * _PLOT_WIDTH

    def y_of(address: float) -> float:
        return _PLOT_BOTTOM - address / address_top * _PLOT_HEIGHT

    name = _text(level.name)
    parts: list[str] = [
        f'<svg xmlns="{_SVG_NAMESPACE}" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" data-level="{name}" '
        f'font-family="{_FONT}" font-size="12">',
        f"<title>Memory map of {name}</title>",
        f'<rect class="background" x="0" y="0" width="{_WIDTH}" height="{_HEIGHT}" fill="#ffffff"/>',
        f'<rect class="plot-area" x="{_PLOT_LEFT}" y="{_PLOT_TOP}" width="{_PLOT_WIDTH}" '
        f'height="{_PLOT_HEIGHT}" fill="#f7f7f7"/>',
    ]

    # Grid and tick labels first, so that buffers are drawn over them.
    parts.append('<g class="address-axis" fill="#333333" text-anchor="end">')
    for address in range(0, address_top + 1, address_step):
        y = _number(y_of(address))
        parts.append(
            f'<line x1="{_PLOT_LEFT - 5}" y1="{y}" x2="{_PLOT_RIGHT}" y2="{y}" stroke="#dddddd" stroke-width="1"/>'
        )
        parts.append(f'<text x="{_PLOT_LEFT - 8}" y="{y}" dy="0.35em">{_format_bytes(address)}</text>')
    parts.append("</g>")

    time_step = _time_ticks(time_span)
    first_tick = math.ceil(time_first / time_step) * time_step
    parts.append('<g class="time-axis" fill="#333333" text-anchor="middle">')
    for step in range(first_tick, time_last + 1, time_step):
        x = _number(x_of(step))
        parts.append(
            f'<line x1="{x}" y1="{_PLOT_TOP}" x2="{x}" y2="{_PLOT_BOTTOM + 5}" stroke="#e4e4e4" stroke-width="1"/>'
        )
        parts.append(f'<text x="{x}" y="{_PLOT_BOTTOM + 18}">{step}</text>')
    parts.append("</g>")

    parts.append('<g class="blocks" stroke="#333333" stroke-width="0.75">')
    for block in blocks:
        left, right = x_of(block.start), x_of(block.end)
        top, bottom = y_of(block.offset + block.size), y_of(block.offset)
        # Zero-length lifetimes and tiny buffers still get a visible sliver.
        width, height = max(right - left, 1.0), max(bottom - top, 1.0)
        top = min(top, bottom - 1.0)
        block_name = _text(block.name)
        parts.append(
            f'<rect class="block" data-buffer="{block_name}" x="{_number(left)}" y="{_number(top)}" '
            f'width="{_number(width)}" height="{_number(height)}" fill="{block_colour(block.name)}" '
            f'fill-opacity="0.9"><title>{_text(_block_title(block))}</title></rect>'
        )
        if height >= 15 and _text_width(block.name, 11) + 8 <= width:
            parts.append(
                f'<text class="block-label" x="{_number(left + width / 2)}" y="{_number(top + height / 2)}" '
                f'dy="0.35em" text-anchor="middle" font-size="11" fill="#111111" stroke="none">{block_name}</text>'
            )
    parts.append("</g>")

    if level.capacity is not None and not capacity_drawn:
        parts.append(
            f'<g class="capacity off-scale"><text x="{_PLOT_RIGHT}" y="{_PLOT_TOP - 8}" text-anchor="end" '
            f'fill="#555555">capacity {level.capacity} bytes, above the axis: '
            f"{_number(100 * level.peak / level.capacity)} % used</text></g>"
        )
    elif level.capacity is not None:
        y = _number(y_of(level.capacity))
        parts.append(
            f'<g class="capacity"><line x1="{_PLOT_LEFT}" y1="{y}" x2="{_PLOT_RIGHT}" y2="{y}" '
            f'stroke="#555555" stroke-width="1.5" stroke-dasharray="6 4"/>'
            f'<text x="{_PLOT_RIGHT - 4}" y="{y}" dy="-0.4em" text-anchor="end" fill="#555555">'
            f"capacity {level.capacity} bytes</text></g>"
        )

    if not blocks:
        parts.append(
            f'<text class="empty" x="{_number(_PLOT_LEFT + _PLOT_WIDTH / 2)}" '
            f'y="{_number(_PLOT_TOP + _PLOT_HEIGHT / 2)}" text-anchor="middle" fill="#777777">'
            f"no buffers in this level</text>"
        )

    # The frame goes last so that buffers touching the plot's edges cannot hide its colour.
    parts.append(
        f'<rect class="frame" x="{_PLOT_LEFT}" y="{_PLOT_TOP}" width="{_PLOT_WIDTH}" height="{_PLOT_HEIGHT}" '
        f'fill="none" stroke="{frame}" stroke-width="{_FRAME_STROKE}"/>'
    )
    parts.append(
        f'<text class="heading" x="{_PLOT_LEFT}" y="{_PLOT_TOP - 18}" font-size="18" font-weight="bold" '
        f'fill="{frame}">{name}</text>'
    )
    parts.append(
        f'<text class="axis-label" x="{_number(_PLOT_LEFT + _PLOT_WIDTH / 2)}" y="{_HEIGHT - 10}" '
        f'text-anchor="middle" fill="#333333">time step</text>'
    )
    label_y = _number(_PLOT_TOP + _PLOT_HEIGHT / 2)
    parts.append(
        f'<text class="axis-label" x="16" y="{label_y}" text-anchor="middle" fill="#333333" '
        f'transform="rotate(-90 16 {label_y})">address (bytes)</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _legend(level: PlotLevel) -> str:
    """The one-line summary under a level's heading: count, peak and capacity."""
    count = len(level.blocks)
    noun = "buffer" if count == 1 else "buffers"
    if level.capacity is None:
        return f"{count} {noun}, peak {level.peak} bytes, capacity unknown"
    text = f"{count} {noun}, peak {level.peak} bytes of capacity {level.capacity}"
    if level.peak > level.capacity:
        text += f" (over capacity by {level.peak - level.capacity} bytes)"
    return text


def _buffer_table(level: PlotLevel) -> str:
    """Every buffer of the level with its colour, name, place and lifetime: the plot's legend, readable where a
    buffer is too small to carry its name."""
    rows = [
        f'<tr class="buffer" data-buffer="{_text(block.name)}"><td><span class="swatch" '
        f'style="background: {block_colour(block.name)}"></span></td><td>{_text(block.name)}</td>'
        f'<td class="number">{block.offset}</td><td class="number">{block.size}</td>'
        f'<td class="number">{block.start}&#8211;{block.end - 1 if block.end > block.start else block.start}</td></tr>'
        for block in sorted(level.blocks, key=lambda b: (b.start, b.offset, b.end, b.size, b.name))
    ]
    return ('<table class="buffers"><thead><tr><th></th><th>buffer</th><th>offset</th><th>bytes</th>'
            '<th>steps</th></tr></thead><tbody>\n' + "\n".join(rows) + "\n</tbody></table>")


_PAGE_STYLE = """
body { font-family: DejaVu Sans, Liberation Sans, Arial, sans-serif; margin: 24px; color: #222222;
       background: #ffffff; }
h1 { font-size: 22px; margin: 0 0 16px 0; }
section.level { margin: 0 0 28px 0; }
section.level h2 { font-size: 18px; margin: 0 0 4px 0; }
p.legend { margin: 0 0 8px 0; }
p.legend.over { color: #b3261e; font-weight: bold; }
svg { display: block; max-width: 100%; height: auto; }
table.buffers { border-collapse: collapse; font-size: 12px; margin: 8px 0 0 0; }
table.buffers th, table.buffers td { padding: 1px 8px 1px 0; text-align: left; }
table.buffers td.number { text-align: right; font-variant-numeric: tabular-nums; }
span.swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid #333333; }
""".strip()


def memory_plot_html(title: str, levels: list[PlotLevel]) -> str:
    """One self-contained HTML page with a section per level, in the given order.

    Everything is inline (style and SVGs) and there is no script, so the page
    opens the same from disk, from an artifact store or offline; the only URI
    in it is the SVG namespace name, which is never fetched.
    """
    parts: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_text(title)}</title>",
        f"<style>\n{_PAGE_STYLE}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{_text(title)}</h1>",
    ]
    if not levels:
        parts.append("<p>No memory levels to show.</p>")
    for index, (level, file_name) in enumerate(zip(levels, level_file_names(levels))):
        over = level.capacity is not None and level.peak > level.capacity
        anchor = file_name[: -len(".svg")]
        parts.append(f'<section class="level" id="{anchor}" data-level="{_text(level.name)}">')
        parts.append(f'<h2 style="color: {level_frame_colour(index)}">{_text(level.name)}</h2>')
        parts.append(f'<p class="legend{" over" if over else ""}">{_text(_legend(level))}</p>')
        parts.append(memory_plot_svg(level, index=index).rstrip("\n"))
        parts.append(_buffer_table(level))
        parts.append("</section>")
    parts.extend(["</body>", "</html>"])
    return "\n".join(parts) + "\n"


def level_file_names(levels: list[PlotLevel]) -> list[str]:
    """SVG file name of each level: ``memory_<name>.svg`` with the name reduced to ``[A-Za-z0-9_-]``.

    Level names come from platform descriptions and may hold anything, so they
    are sanitised before becoming paths; names that sanitise alike (``"L2 "``
    and ``"L2_"``) get ``-2``, ``-3``... so that no level overwrites another.
    """
    names: list[str] = []
    taken: set[str] = set()
    for level in levels:
        stem = re.sub(r"[^A-Za-z0-9_-]", "_", level.name) or "level"
        candidate, suffix = stem, 2
        while candidate.lower() in taken:  # lower(): case-insensitive file systems
            candidate, suffix = f"{stem}-{suffix}", suffix + 1
        taken.add(candidate.lower())
        names.append(f"memory_{candidate}.svg")
    return names


def write_memory_plot(directory: Path, title: str, levels: list[PlotLevel]) -> list[Path]:
    """Write ``memory.html`` and one ``memory_<level>.svg`` per level into ``directory``.

    Returns the written paths, the page first and then the SVGs in level order.
    The directory is created if needed; files of levels no longer present from
    an earlier run are left alone.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    page = directory / "memory.html"
    page.write_text(memory_plot_html(title, levels), encoding="utf-8", newline="\n")
    written = [page]
    for index, (level, file_name) in enumerate(zip(levels, level_file_names(levels))):
        path = directory / file_name
        path.write_text(memory_plot_svg(level, index=index), encoding="utf-8", newline="\n")
        written.append(path)
    return written
