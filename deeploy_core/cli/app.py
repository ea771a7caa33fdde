"""The command group, its plugin switches and the one place user errors are printed."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from deeploy_core.cli.session import CliSession
from deeploy_core.errors import DeeployError, printable_line

COMMANDS: dict[str, tuple[str, str]] = {
    "plugins": ("deeploy_core.cli.plugins_command", "plugins_command"),
    "compile": ("deeploy_core.cli.compile_command", "compile_command"),
    "validate": ("deeploy_core.cli.validate_command", "validate_command"),
    "analyze": ("deeploy_core.cli.analyze_command", "analyze_command"),
    "supported-ops": ("deeploy_core.cli.supported_ops_command", "supported_ops_command"),
    "schema": ("deeploy_core.cli.schema_command", "schema_command"),
    "new-plugin": ("deeploy_core.cli.new_plugin_command", "new_plugin_command"),
    "sweep": ("deeploy_core.cli.sweep_command", "sweep_command"),
}
"""Command name → (module, attribute).  A command's module is imported only when that command runs (or help lists
it): ``compile`` then never pays for ``validate``'s ONNX Runtime glue or ``analyze``'s plot and tables."""


class DeeployGroup(click.Group):
    """A click group that turns :class:`DeeployError` into one line on stderr (plus its details) and exit code 2,
    and loads its commands on first use (:data:`COMMANDS`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            module, attribute = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DeeployError as error:
            click.echo(f"error: {printable_line(str(error))}", err=True)
            for line in getattr(error, "details", ()):
                click.echo(f"  {printable_line(line)}", err=True)
            ctx.exit(error.exit_code)


def _trace_to_stderr(text: str) -> None:
    """Where ``--trace-plugins`` sends the host's trace lines: stderr, so stdout stays the command's own output."""
    sys.stderr.write(text)


@click.group(cls=DeeployGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="deeploy-core")
@click.option("--no-plugins", is_flag=True, help="Load no installed plugins (built-ins stay).")
@click.option("--disable-plugin", "disabled", multiple=True, metavar="NAME", help="Do not load plugin NAME (repeatable).")
@click.option("--trace-plugins", is_flag=True, help="Trace plugin loading and every hook call on stderr.")
@click.pass_context
def cli(ctx: click.Context, no_plugins: bool, disabled: tuple[str, ...], trace_plugins: bool) -> None:
    """Compile ONNX networks to C for microcontrollers and multi-core clusters.

    Installed plugins are found through the 'deeploy_core.plugins' entry points;
    the DEEPLOY_CORE_PLUGINS variable (comma-separated, empty for none) limits
    which are loaded.
    """
    ctx.obj = CliSession(
        environ=dict(os.environ),
        no_plugins=no_plugins,
        disabled=disabled,
        trace=_trace_to_stderr if trace_plugins else None,
    )



def main() -> None:
    """Run the command group (the console script goes through ``deeploy_core.cli.main``, which installs the
    interrupt handling first)."""
    cli(prog_name="deeploy-core")
