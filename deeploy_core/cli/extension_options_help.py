"""The section of ``--help`` that lists every installed extension's options, built only when help is shown.

Which options exist depends on the installed plugins, so the section cannot
be written into the command's static help.  Listing them needs the plugin
host, which imports every plugin: too slow for every invocation, so the host
is loaded here, when (and only when) help is printed, from the switches of
this invocation (``--no-plugins``, ``--disable-plugin``, the allow-list).
"""

from __future__ import annotations

import os

import click

from deeploy_core.errors import DeeployError, printable_line

SECTION = "Extension options (--option NAME=VALUE)"
INTRODUCTION = ("Each sets an option of an extension this compile selects (only those count). A name that two "
                "selected extensions declare takes a qualifier: KIND.NAME=VALUE (platform, memory_level, tiler, "
                "allocator, code_transformation) or EXTENSION.NAME=VALUE. Short flags: --cores sets the platform's "
                "cores, --l1/--l2/--l3 the memory level's l1/l2/l3, --tiling-strategy the tiler's strategy, --fusion its fusion.")


class CompilingCommand(click.Command):
    """A command that compiles a model; its help ends with the options the installed extensions declare."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        from deeploy_core.cli.session import CliSession
        from deeploy_core.options.listing import declared_options, option_metavar, option_summary
        from deeploy_core.options.resolved import owner_label
        from deeploy_core.plugins import PluginHost, PluginSelection

        with formatter.section(SECTION):
            formatter.write_text(INTRODUCTION)
            formatter.write_paragraph()
            try:
                session = ctx.find_object(CliSession)
                host = session.host if session is not None \
                    else PluginHost.discover(PluginSelection.from_options(dict(os.environ)))
                declared = declared_options(host)
            except DeeployError as error:  # a broken plugin setup must not cost the user the rest of the help
                formatter.write_text(f"(cannot list them: {printable_line(str(error))})")
                return
            if not declared:
                formatter.write_text("No installed extension declares options.")
            for entry in declared:
                formatter.write_text(f"{owner_label(entry.kind, entry.name)}:")
                with formatter.indentation():
                    formatter.write_dl([(option_metavar(spec), option_summary(spec)) for spec in entry.options])
