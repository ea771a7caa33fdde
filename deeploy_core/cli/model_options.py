"""Options shared by every command that compiles a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from deeploy_core.api import CompileOptions
from deeploy_core.builtin.plugin import BUFFERING_TILERS, DEFAULT_ALLOCATOR
from deeploy_core.errors import DeeployError
from deeploy_core.frontend.importer import read_model
from deeploy_core.frontend.input_shapes import parse_input_shape
from deeploy_core.ir import DataType
from deeploy_core.ir.dtypes import UnsupportedTypeError, from_name
from deeploy_core.options.assignments import parse_option_text
from deeploy_core.tiling.tiler_options import FUSION_MODES
from deeploy_core.validate.data import input_types_from_data
from deeploy_core.cli.byte_size import HELP as BYTES_HELP, ByteSize
from deeploy_core.cli.model_argument import ModelPath

DEFAULT_PLATFORM = "generic-c"


def model_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """MODEL argument plus --platform, --memory-level, --tiler, --allocator, --input-shape/-type, --quantization,
    --code-transformation, --option and the short flags of extension options (--l1, --cores, --tiling-strategy…)."""
    return click.argument("model", type=ModelPath())(selection_options(command))


def selection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options of :func:`model_options` without the MODEL argument (``sweep`` takes several models)."""
    decorators = [
        click.option("--platform", default=DEFAULT_PLATFORM, show_default=True, help="Platform to compile for."),
        click.option("--memory-level", default=None,
                     help="Memory hierarchy / placement policy (a registered name); turns tiling on."),
        click.option("--tiler", default=None,
                     help="Tiler (by name); turns tiling on, with the platform's or the built-in memory hierarchy."),
        click.option("--allocator", default=DEFAULT_ALLOCATOR, show_default=True, help="Static allocator (by name)."),
        click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME=D1xD2…",
                     help="Fix the shape of a graph input (repeatable)."),
        click.option("--input-type", "input_types", multiple=True, metavar="NAME=TYPE",
                     help="Element type of a graph input, e.g. x=int8 (repeatable); integer types switch float-typed "
                          "integer networks (Deeploy's dialect) to raw integer arithmetic."),
        click.option("--input-types-from", "input_types_from", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                     help="Pick input types from sample data (.npz, by position) with Deeploy's rule: the narrowest "
                          "integer type holding each array's range (unsigned first), float32 otherwise."),
        click.option("--memory-hierarchy", default=None, metavar="NAME|FILE.yaml",
                     help="Memory hierarchy: a registered memory-level name or a YAML file (turns tiling on)."),
        click.option("--l1", "l1", type=ByteSize(), default=None, metavar="BYTES",
                     help=f"Size of level L1 ({BYTES_HELP}): the memory level's option l1; turns tiling on (on "
                          "generic-c with the built-in l2-l1 hierarchy)."),
        click.option("--l2", "l2", type=ByteSize(), default=None, metavar="BYTES",
                     help=f"Size of level L2 ({BYTES_HELP}): the memory level's option l2; turns tiling on."),
        click.option("--l3", "l3", type=ByteSize(), default=None, metavar="BYTES",
                     help=f"Size of level L3 ({BYTES_HELP}): the memory level's option l3 (a hierarchy with an L3, "
                          "e.g. pulp-cluster's); turns tiling on."),
        click.option("--cores", "cores", type=click.IntRange(1), default=None, metavar="N",
                     help="Cores of a cluster platform: the platform's option cores (pulp-cluster: default 8)."),
        click.option("--buffering", type=click.Choice(list(BUFFERING_TILERS)), default=None,
                     help="Tile buffers per streamed tensor: a shorthand for --tiler single-buffering|double-buffering "
                          "(double fetches the next tile while the current one computes; turns tiling on). "
                          "Default: the tiler's own scheme, single for the default tiler."),
        click.option("--tiling-strategy", default=None, metavar="STRATEGY",
                     help="The tiler's option strategy; the built-in tilers' CP-SAT objective: fewest tiles (max, "
                          "their default), smallest tiles (min), seeded mix (random-max)."),
        click.option("--fusion", type=click.Choice(list(FUSION_MODES)), default=None,
                     help="The tiler's option fusion: the built-in tilers fuse chains of layers into one tile loop "
                          "whose intermediate tiles stay in L1 where that moves fewer bytes (auto, their default), or "
                          "tile every layer alone (none)."),
        click.option("--tiling-from", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
                     metavar="REPORT.json", help="Reuse the tiling solution and memory map of an earlier compile."),
        click.option("--quantization", type=click.Choice(["exact", "fixed-point"]), default="exact", show_default=True,
                     help="QDQ models: 'exact' keeps QuantizeLinear/DequantizeLinear (bit-exact with ONNX Runtime, "
                          "needs float); 'fixed-point' turns quantised layers into integer-only kernels (≤ 1 LSB)."),
        click.option("--code-transformation", "code_transformations", multiple=True, metavar="NAME",
                     help="Run the installed code transformation NAME on every layer (repeatable; they run in the "
                          "order given, after those the platform's chain includes). An installed transformation "
                          "runs only when named here or by the platform."),
        click.option("--option", "extension_options", multiple=True, metavar="NAME=VALUE",
                     help="Set an option of a selected extension (platform, memory level, tiler, allocator, code "
                          "transformation), repeatable; KIND.NAME=VALUE or EXTENSION.NAME=VALUE when two selected "
                          "extensions declare NAME. The options of the installed extensions are listed below."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def compile_options(
    model: Path,
    platform: str,
    memory_level: str | None,
    tiler: str | None,
    allocator: str,
    input_shapes: tuple[str, ...],
    input_types: tuple[str, ...] = (),
    input_types_from: Path | None = None,
    quantization: str = "exact",
    memory_hierarchy: str | None = None,
    l1: int | None = None,
    l2: int | None = None,
    l3: int | None = None,
    buffering: str | None = None,
    tiling_strategy: str | None = None,
    fusion: str | None = None,
    tiling_from: Path | None = None,
    cores: int | None = None,
    code_transformations: tuple[str, ...] = (),
    extension_options: tuple[str, ...] = (),
) -> CompileOptions:
    """The parsed form of :func:`model_options`."""
    types = data_input_types(model, input_types_from) if input_types_from else {}
    types.update(parse_input_type(text) for text in input_types)
    return CompileOptions(
        platform=platform,
        memory_level=memory_level,
        tiler=tiler,
        allocator=allocator,
        input_shapes=dict(parse_input_shape(text) for text in input_shapes),
        input_types=types,
        quantization=quantization,
        network_name=model.stem,
        level_sizes={name: size for name, size in (("L1", l1), ("L2", l2), ("L3", l3)) if size is not None},
        buffering=buffering,
        memory_hierarchy=memory_hierarchy,
        tiling_strategy=tiling_strategy,
        fusion=fusion,
        tiling_from=tiling_from,
        cores=cores,
        code_transformations=tuple(code_transformations),
        options=parse_extension_options(extension_options),
    )


def parse_extension_options(texts: tuple[str, ...]) -> dict[str, object]:
    """``--option`` texts as ``{"NAME" or "QUALIFIER.NAME": "VALUE"}``; a key given twice is refused, never
    silently overwritten (the values are checked against the extensions' schemas when the compile resolves them)."""
    given: dict[str, object] = {}
    for text in texts:
        assignment = parse_option_text(text)
        if assignment.target in given:
            raise DeeployError(f"--option {text}: {assignment.target!r} is already given "
                               f"(--option {assignment.target}={given[assignment.target]}); give it once")
        given[assignment.target] = assignment.value
    return given


def parse_input_type(text: str) -> tuple[str, DataType]:
    """``"x=int8"`` → ``("x", INT8)``."""
    name, sep, type_name = text.rpartition("=")
    if not sep or not name:
        raise DeeployError(f"--input-type {text!r}: expected NAME=TYPE")
    try:
        return name, from_name(type_name)
    except UnsupportedTypeError as error:
        raise DeeployError(f"--input-type {text!r}: {error}") from None


def data_input_types(model: Path, data: Path) -> dict[str, DataType]:
    """Deeploy's rule applied to the arrays of ``data`` bound to the model's inputs by position.

    Only the graph's input names, in order, are needed, and importing does not change them: the file is parsed,
    not imported (checked, converted, shaped) — the compile that follows imports it once.
    """
    return input_types_from_data(read_model(model), data)
