"""``deeploy-core supported-ops``: what a platform can compile."""

from __future__ import annotations

import json

import click
from rich.console import Console

from deeploy_core.cli.session import CliSession
from deeploy_core.cli.table_output import TextTable, print_table
from deeploy_core.supported_ops import supported_operators, verification_text

OPERATOR_COLUMNS = ("op", "kernel", "types", "from", "platforms", "tiling", "verified", "constraints")


@click.command("supported-ops")
@click.option("--platform", default="generic-c", show_default=True, help="Platform to list.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_obj
def supported_ops_command(session: CliSession, platform: str, as_json: bool) -> None:
    """List the operators of a platform: types, constraints, platforms, tiling and verification."""
    rows = supported_operators(session.host, platform)
    if as_json:
        click.echo(json.dumps(rows, indent=2, sort_keys=True))
        return
    # One kernel per line (``| grep Conv`` finds its rows); the long free text goes last so it pushes nothing.
    table = TextTable(OPERATOR_COLUMNS, title=f"operators on {platform}")
    for row in rows:
        table.add_row(row["op"], row["kernel"], row["signature"], row["source"], ",".join(row["platforms"]),
                      row["tiling"]["constraint"], verification_text(row), row["constraints"])
    print_table(Console(soft_wrap=True), table, fallback="plain")
