"""``deeploy-core schema``: the JSON Schemas of what deeploy-core writes, for users' validators and editors."""

from __future__ import annotations

import click

from deeploy_core.report.schema import report_schema_text


@click.group("schema")
def schema_command() -> None:
    """Print the JSON Schema of a file deeploy-core writes."""


@schema_command.command("report")
def report_schema_command() -> None:
    """Print the JSON Schema (draft 2020-12) of report.json, as plain JSON on standard output."""
    click.echo(report_schema_text(), nl=False)
