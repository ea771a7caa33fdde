"""``compile``'s options for the generated C API: ``--prefix``, ``--arena`` and the section options.

Firmware links more than one network into one image, owns its RAM and lays
out its memory in a linker script; these options shape ``Network.h`` and the
placement of weights and arena for that (see docs/generated-code.rst).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from deeploy_core.codegen.api_names import ARENA_MODES, NetworkApi


def api_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--prefix, --arena, --weights-section, --arena-section."""
    decorators = [
        click.option("--prefix", default=None, metavar="NAME",
                     help="Namespace every exported symbol and macro of Network.h (NAME_InitNetwork, NAME_inputs, "
                          "NAME_ARENA_BYTES, …) so that several networks link into one program; default: today's "
                          "names (InitNetwork, DeeployNetwork_inputs, DEEPLOY_NETWORK_ARENA_BYTES)."),
        click.option("--arena", "arena", type=click.Choice(list(ARENA_MODES)), default="static", show_default=True,
                     help="Who owns the activation arena: 'static' (an array in Network.c) or 'user' "
                          "(InitNetwork(void *arena) takes the caller's buffer of ARENA_BYTES, aligned to "
                          "ARENA_ALIGNMENT, which networks run one after another may share)."),
        click.option("--weights-section", default=None, metavar="SECTION",
                     help="Place the constant weight arrays in this linker section (GCC/Clang section attribute)."),
        click.option("--arena-section", default=None, metavar="SECTION",
                     help="Place the static arena in this linker section (GCC/Clang section attribute; "
                          "with --arena static)."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def network_api(prefix: str | None, arena: str, weights_section: str | None, arena_section: str | None) -> NetworkApi:
    """The parsed form of :func:`api_options` (a bad name or combination: one-line DeeployError)."""
    return NetworkApi(prefix=prefix, arena=arena, weights_section=weights_section, arena_section=arena_section)
