"""Command names taken now so that plugins cannot claim them before the compiler lands."""

from __future__ import annotations

import click

from deeploy_core.errors import DeeployError

_RESERVED = {
    "compile": "compile an ONNX model to C",
    "validate": "compile, build, run and compare with ONNX Runtime",
    "analyze": "report layers, memory and operation counts",
    "supported-ops": "list the operators each platform supports",
}


def _reserved_command(name: str, summary: str) -> click.Command:
    def run(args: tuple[str, ...]) -> None:
        raise DeeployError(f"'{name}' is not available in this version of deeploy-core")

    return click.Command(name, callback=run, help=f"(not yet available) {summary[0].upper()}{summary[1:]}.",
                         context_settings={"ignore_unknown_options": True},
                         params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)])


RESERVED_COMMANDS: tuple[click.Command, ...] = tuple(
    _reserved_command(name, summary) for name, summary in sorted(_RESERVED.items())
)
