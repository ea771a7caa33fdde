"""``deeploy-core plugins``: what is installed, what it provides and whether it works."""

from __future__ import annotations

import json

import click
from rich.console import Console

from deeploy_core.cli.session import CliSession
from deeploy_core.cli.table_output import TextTable, print_table
from deeploy_core.errors import DeeployError
from deeploy_core.plugins import PluginHost, PluginRecord, PluginStatus

_STATUS_STYLE = {PluginStatus.OK: "green", PluginStatus.FAILED: "red", PluginStatus.DISABLED: "yellow",
                 PluginStatus.CONFLICT: "magenta"}


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")
@click.option("--all", "include_builtin", is_flag=True, help="Include the core's built-in plugins.")
@click.pass_obj
def plugins_command(session: CliSession, as_json: bool, include_builtin: bool) -> None:
    """List plugins: name, distribution, version, hooks, extensions and status."""
    records = session.host.plugins(include_builtin=include_builtin)
    if as_json:
        listing = [{**record.to_json(), "options": _declared_options(session.host, record)} for record in records]
        click.echo(json.dumps(listing, indent=2, sort_keys=True))
        return
    if not records:
        click.echo("No plugins installed." + ("" if include_builtin else " (--all also lists the built-ins)"))
        return
    # A plugin per block of ``key: value`` lines when the table cannot be drawn whole: error messages are long.
    print_table(Console(soft_wrap=True), _table(records), fallback="records")


def _table(records: list[PluginRecord]) -> TextTable:
    table = TextTable(("plugin", "distribution", "version", "provides", "status"))
    for record in records:
        provides = "; ".join(f"{kind}: {', '.join(sorted(names))}" for kind, names in record.extensions.items() if names)
        status = record.status.value + (f": {record.error}" if record.error else "")
        status += "".join(f"; note: {note}" for note in record.notes)  # operator variants shadowing others
        # An error message quotes whatever the plugin raised: TextTable shows it literally, never as markup.
        table.add_row(record.name, record.distribution, record.version, provides or "-", status,
                      style={"status": _STATUS_STYLE[record.status]})
    return table


def _declared_options(host: PluginHost, record: PluginRecord) -> dict[str, dict[str, list[dict[str, object]]]]:
    """Kind → extension name → the options it declares (name, type, default, help, choices, bounds), for every
    extension this plugin registered and the host uses (a name that lost a conflict shows nothing here)."""
    listing: dict[str, dict[str, list[dict[str, object]]]] = {}
    for kind, names in record.extensions.items():
        for name in sorted(names):
            try:
                registered = host.registry.get(kind, name)  # listing is not using: no duplicate warnings
            except DeeployError:
                continue
            if registered.origin.plugin == record.name:
                listing.setdefault(kind, {})[name] = [spec.to_json() for spec in registered.extension.options]
    return listing
