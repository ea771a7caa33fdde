"""Tables that stay readable wherever the output goes.

A rich table shrinks its columns to the terminal width and wraps the cells,
so at 80 columns (or in a pipe, where rich assumes 80) an op name or a byte
count is split over two lines: ``grep Conv`` misses the row and a reader
cannot copy a number.  A :class:`TextTable` is therefore drawn with rich only
on a terminal wide enough to show every cell on one line; otherwise it falls
back to plain text that never breaks a cell, and lets a line be as long as it
needs:

* :func:`plain_lines`: fixed-width columns, each as wide as its longest cell
  (one row per line, good for tables of many short rows);
* :func:`record_lines`: one ``key: value`` line per cell, a blank line between
  rows (good for few rows with long free text).

Every cell passes through :func:`~deeploy_core.errors.printable_line`, so a
model or plugin name can neither hold markup nor forge a line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from deeploy_core.cli.terminal_text import terminal_text
from deeploy_core.errors import printable_line

Fallback = Literal["plain", "records"]
COLUMN_GAP = "  "
"""Between two columns of a plain table: two spaces, so a cell's own single spaces stay readable."""
UNBOUNDED = 1 << 20
"""A width no table reaches, to measure a table's natural width."""


LABEL_WIDTH = 60
"""Widest layer label the per-layer tables show: tf2onnx names a node after every TensorFlow op folded into it
(hundreds of characters); a clipped label keeps both ends, which is where those names differ."""


def clipped_label(label: str, width: int = LABEL_WIDTH) -> str:
    """``label``, or its first and last characters around ``...`` when it is wider than ``width``."""
    if len(label) <= width:
        return label
    keep = (width - 3) // 2
    return f"{label[:keep]}...{label[-(width - 3 - keep):]}"


@dataclass
class TextTable:
    """Column titles, rows of cells and how to draw them; cells are converted with ``str``."""

    columns: tuple[str, ...]
    rows: list[tuple[object, ...]] = field(default_factory=list)
    title: str = ""
    numeric: frozenset[str] = frozenset()
    """Columns whose cells are right-aligned (numbers line up by their last digit)."""
    styles: dict[tuple[int, str], str] = field(default_factory=dict)
    """(row index, column) → rich style, used only when the table is drawn by rich (colour on a terminal)."""

    def add_row(self, *cells: object, style: dict[str, str] | None = None) -> None:
        """Append a row (one cell per column); ``style`` maps columns of this row to rich styles."""
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells for {len(self.columns)} columns")
        for column, value in (style or {}).items():
            self.styles[(len(self.rows), column)] = value
        self.rows.append(cells)

    def text_rows(self) -> list[tuple[str, ...]]:
        """Every cell as the one line it is shown as."""
        return [tuple(printable_line(str(cell)) for cell in row) for row in self.rows]


def rich_table(table: TextTable) -> Table:
    """The table drawn by rich (cells are literal text, never markup)."""
    drawn = Table(title=terminal_text(table.title) if table.title else None)
    for column in table.columns:
        drawn.add_column(column, justify="right" if column in table.numeric else "left")
    for index, row in enumerate(table.rows):
        drawn.add_row(*(terminal_text(cell, table.styles.get((index, column), ""))
                        for column, cell in zip(table.columns, row)))
    return drawn


def plain_lines(table: TextTable) -> list[str]:
    """Title, header, a rule of dashes per column, then one line per row; no cell is ever wrapped.

    Widths are counted in terminal cells, so a name in a wide script keeps
    the columns after it aligned.
    """
    rows = table.text_rows()
    widths = [max([cell_len(column), *(cell_len(row[index]) for row in rows)])
              for index, column in enumerate(table.columns)]

    def line(cells: tuple[str, ...]) -> str:
        padding = [" " * (width - cell_len(cell)) for cell, width in zip(cells, widths)]
        padded = [pad + cell if column in table.numeric else cell + pad
                  for column, cell, pad in zip(table.columns, cells, padding)]
        return COLUMN_GAP.join(padded).rstrip()

    lines = [printable_line(table.title)] if table.title else []
    lines.append(line(table.columns))
    lines.append(COLUMN_GAP.join("-" * width for width in widths))
    lines.extend(line(row) for row in rows)
    return lines


def record_lines(table: TextTable) -> list[str]:
    """Title, then per row one ``column: value`` line per cell (values aligned), rows separated by a blank line."""
    width = max(len(column) for column in table.columns) + 1
    lines = [printable_line(table.title), ""] if table.title else []
    for number, row in enumerate(table.text_rows()):
        if number:
            lines.append("")
        lines.extend(f"{column + ':':<{width}} {cell}".rstrip() for column, cell in zip(table.columns, row))
    return lines


def fits(console: Console, table: Table) -> bool:
    """Whether rich can draw ``table`` on ``console`` with every cell on one line.

    Measured as if the console were unbounded: rich caps a measurement at the
    width it is given, which would make every table "fit".
    """
    unbounded = console.options.update(width=UNBOUNDED, max_width=UNBOUNDED)
    return console.measure(table, options=unbounded).maximum <= console.width


def drawable(console: Console, *tables: TextTable) -> bool:
    """Whether rich should draw ``tables``: the console is a terminal and every one of them fits whole.

    A pipe or a file never gets drawn tables: even when they would fit, their
    box-drawing characters get in the way of ``grep`` and ``cut``.  A command
    printing several tables asks once for all of them, so its output does not
    mix drawn and plain tables.
    """
    return console.is_terminal and all(fits(console, rich_table(table)) for table in tables)


def print_table(console: Console, table: TextTable, fallback: Fallback = "plain", draw: bool | None = None) -> None:
    """Draw ``table`` with rich when ``draw`` (default: when :func:`drawable`), else as plain text (``fallback``)."""
    if draw is None:
        draw = drawable(console, table)
    if draw:
        console.print(rich_table(table))
        return
    lines = plain_lines(table) if fallback == "plain" else record_lines(table)
    console.file.write("".join(f"{line}\n" for line in lines))
    console.file.flush()
