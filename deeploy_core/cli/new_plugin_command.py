"""``deeploy-core new-plugin``: a new plugin distribution from the project template shipped with the core."""

from __future__ import annotations

from pathlib import Path

import click

from deeploy_core.cli.session import CliSession
from deeploy_core.plugin_template import KINDS, check_name, new_plugin


@click.command("new-plugin")
@click.argument("kind", metavar="KIND", type=click.Choice(list(KINDS)))
@click.argument("name")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.pass_obj
def new_plugin_command(session: CliSession, kind: str, name: str, directory: Path) -> None:
    """Write a new plugin distribution of KIND called NAME into DIR (a new or empty folder).

    KIND: platform, memory-level, tiler, allocator, code-transformation or operator.

    DIR gets pyproject.toml (the entry point NAME in the group deeploy_core.plugins; distribution deeploy-NAME,
    package deeploy_NAME), a minimal working extension of KIND, tests that run the core's conformance suite for
    KIND, and a README saying how to install and test it.  NAME: lower-case letters, digits and single hyphens,
    not taken by an installed package or plugin.  Needs copier (pip install 'deeploy-core[template]').
    """
    files = new_plugin(kind, name, directory, session.host)
    names = check_name(name)
    click.echo(f"created {directory}: {kind} plugin {name!r} (distribution {names.distribution}, "
               f"package {names.package})")
    for path in files:
        click.echo(f"  {path.as_posix()}")
    click.echo(f"next: pip install -e {directory}, then pytest {directory / 'tests'} (see {directory / 'README.md'})")
