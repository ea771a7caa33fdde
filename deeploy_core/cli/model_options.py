"""Options shared by every command that compiles a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from deeploy_core.api import CompileOptions
from deeploy_core.builtin.plugin import DEFAULT_ALLOCATOR
from deeploy_core.frontend.input_shapes import parse_input_shape

DEFAULT_PLATFORM = "generic-c"


def model_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """MODEL argument plus --platform, --memory-level, --tiler, --allocator, --input-shape."""
    decorators = [
        click.argument("model", type=click.Path(path_type=Path, dir_okay=False)),
        click.option("--platform", default=DEFAULT_PLATFORM, show_default=True, help="Platform to compile for."),
        click.option("--memory-level", default=None, help="Memory hierarchy / placement policy (by name)."),
        click.option("--tiler", default=None, help="Tiling strategy (by name; needs --memory-level)."),
        click.option("--allocator", default=DEFAULT_ALLOCATOR, show_default=True, help="Static allocator (by name)."),
        click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME=D1xD2…",
                     help="Fix the shape of a graph input (repeatable)."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def compile_options(
    model: Path, platform: str, memory_level: str | None, tiler: str | None, allocator: str, input_shapes: tuple[str, ...]
) -> CompileOptions:
    """The parsed form of :func:`model_options`."""
    return CompileOptions(
        platform=platform,
        memory_level=memory_level,
        tiler=tiler,
        allocator=allocator,
        input_shapes=dict(parse_input_shape(text) for text in input_shapes),
        network_name=model.stem,
    )
