"""``sweep --grid KEY=V1,V2,…``: which keys exist, what their values mean, and the points they span.

A key is the long name of one of ``compile``'s options without its dashes
(``l1``, ``buffering``, ``allocator``, ``tiling-strategy`` …, exactly the
options :func:`~deeploy_core.cli.model_options.selection_options` declares
that take one value), or the name of an option an installed extension
declares (what ``--option NAME=VALUE`` takes, also as ``KIND.NAME`` or
``EXTENSION.NAME``).  Values are checked by the same types compile's options
and the extensions' schemas use, before anything runs.  Every other option
given on the command line is shared by every point.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from deeploy_core.errors import DeeployError, printable_line
from deeploy_core.options.listing import OPTION_KINDS, declared_options
from deeploy_core.options.spec import OptionSpec, OptionValueError
from deeploy_core.plugins import PluginHost
from deeploy_core.sweep.point import ModelSource, SweepPoint, file_sha256, point_key

SWEEP_OWN = frozenset({"models", "grid_texts", "output", "validate", "scheduler", "workers", "retries", "quiet"})
"""sweep's own parameters: neither grid keys nor shared compile options."""


def long_name(option: click.Option) -> str:
    return max(option.opts, key=len).lstrip("-")


def compile_parameters(command: click.Command) -> list[click.Option]:
    """compile's options on the sweep command, in declaration order."""
    return [param for param in command.params if isinstance(param, click.Option) and param.name not in SWEEP_OWN]


def flag_keys(command: click.Command) -> dict[str, click.Option]:
    """Grid keys that are compile options: every one that takes a single value."""
    return {long_name(option): option for option in compile_parameters(command)
            if not option.multiple and not option.is_flag}


def extension_keys(host: PluginHost) -> dict[str, list[OptionSpec]]:
    """Grid keys that are extension options: ``NAME``, ``KIND.NAME`` and ``EXTENSION.NAME`` → the specs they name."""
    keys: dict[str, list[OptionSpec]] = {}
    for entry in declared_options(host):
        for spec in entry.options:
            for key in (spec.name, f"{entry.kind}.{spec.name}", f"{entry.name}.{spec.name}"):
                keys.setdefault(key, []).append(spec)
    return keys


@dataclass(frozen=True)
class GridAxis:
    """One ``--grid`` key and its values, converted (JSON values for results.jsonl)."""

    key: str
    values: tuple[Any, ...]
    option: click.Option | None
    """The compile option it sets, or None for an extension option (set through ``--option KEY=VALUE``)."""

    def arguments(self, value: Any) -> list[str]:
        if self.option is None:
            return ["--option", f"{self.key}={value}"]
        return [max(self.option.opts, key=len), str(value)]


def parse_grid(texts: tuple[str, ...], ctx: click.Context, host: PluginHost) -> list[GridAxis]:
    """The axes ``--grid`` gives, each key checked and each value converted (one-line errors)."""
    flags = flag_keys(ctx.command)
    axes: list[GridAxis] = []
    extension: dict[str, list[OptionSpec]] | None = None
    for text in texts:
        key, sep, listed = text.partition("=")
        key = key.strip()
        values = [value.strip() for value in listed.split(",")]
        if not sep or not key or any(not value for value in values):
            raise DeeployError(f"--grid {text}: expected KEY=VALUE1,VALUE2,… (e.g. --grid l1=8192,16384)")
        if any(axis.key == key for axis in axes):
            raise DeeployError(f"--grid {key}: given twice; list every value in one --grid {key}=…")
        if len(set(values)) != len(values):
            raise DeeployError(f"--grid {text}: a value is listed twice")
        if key in flags:
            option = flags[key]
            if ctx.get_parameter_source(str(option.name)) not in (ParameterSource.DEFAULT, None):
                raise DeeployError(f"--grid {key} and --{key} both set {key}: give it in one place")
            converted = []
            for value in values:
                try:
                    typed = option.type_cast_value(ctx, value)
                    file = _as_file(option, typed)
                    converted.append(str(file) if file is not None else typed)
                except click.BadParameter as error:
                    raise DeeployError(f"--grid {key}={value}: {printable_line(error.format_message())}") from None
            axes.append(GridAxis(key, tuple(converted), option))
            continue
        if extension is None:
            extension = extension_keys(host)
        if key not in extension:
            names = sorted(set(flags) | {name for name in extension if "." not in name})
            raise DeeployError(f"--grid {key}: unknown key {key!r}; valid keys: {', '.join(names)} (the long names "
                               f"of compile's options, and extension options also as KIND.NAME or EXTENSION.NAME; "
                               f"kinds: {', '.join(OPTION_KINDS)})")
        typed_values = []
        for value in values:
            typed, problems = None, []
            for spec in extension[key]:  # a name several extensions declare: the selected one decides at compile
                try:
                    typed = spec.convert(value) if typed is None else typed
                except OptionValueError as error:
                    problems.append(str(error))
            if typed is None:
                raise DeeployError(f"--grid {key}={value}: expected {printable_line(problems[0])}")
            typed_values.append(typed)
        axes.append(GridAxis(key, tuple(typed_values), None))
    return axes


FILE_NAMING = frozenset({"memory_hierarchy"})
"""Text options whose value may name a file (a hierarchy YAML) rather than a registered extension."""


def _as_file(option: click.Option, value: Any) -> Path | None:
    """The file a value names: a path option's value, or a text option of :data:`FILE_NAMING` naming a file."""
    if isinstance(value, Path):
        return value.resolve()
    if option.name in FILE_NAMING and isinstance(value, str) and Path(value).is_file():
        return Path(value).resolve()
    return None


@dataclass(frozen=True)
class SharedOptions:
    """The compile options given on the command line (not defaults), shared by every point."""

    arguments: list[str]
    """As compile's arguments, files made absolute (workers may start in another folder)."""
    given: dict[str, Any]
    """``{long name: value}`` as given, for results.jsonl."""
    identity: dict[str, Any]
    """As they enter a point's key: a file counts by its bytes (``sha256:…``), not by its path."""


def shared_options(ctx: click.Context, selection: Mapping[str, Any]) -> SharedOptions:
    """The options every point shares (see :class:`SharedOptions`)."""
    shared = SharedOptions([], {}, {})
    for option in compile_parameters(ctx.command):
        name = str(option.name)
        if ctx.get_parameter_source(name) in (ParameterSource.DEFAULT, None):
            continue
        values = list(selection[name]) if option.multiple else [selection[name]]
        if not values:
            continue
        texts, identities = [], []
        for value in values:
            file = _as_file(option, value)
            texts.append(str(file if file is not None else value))
            identities.append(f"sha256:{file_sha256(file)}" if file is not None else value)
            shared.arguments.extend([max(option.opts, key=len), texts[-1]])
        key = long_name(option)
        shared.given[key] = [str(value) if isinstance(value, Path) else value for value in values] \
            if option.multiple else (str(values[0]) if isinstance(values[0], Path) else values[0])
        shared.identity[key] = identities if option.multiple else identities[0]
    return shared


def check_extension_conflicts(axes: list[GridAxis], given: Mapping[str, Any]) -> None:
    """An extension option set by ``--grid`` and by ``--option`` at once is refused (compile refuses it too)."""
    from deeploy_core.cli.model_options import parse_extension_options

    shared = parse_extension_options(tuple(given.get("option", ())))
    for axis in axes:
        if axis.option is None and axis.key in shared:
            raise DeeployError(f"--grid {axis.key} and --option {axis.key}={shared[axis.key]} both set {axis.key}: "
                               "give it in one place")


def grid_points(models: list[ModelSource], axes: list[GridAxis], shared: SharedOptions, validate: bool,
                versions: Mapping[str, Any]) -> list[SweepPoint]:
    """Every model × every combination of the axes' values (models in the order given, then the grid's order);
    a point that appears twice (the same model bytes given twice) is kept once."""
    points: list[SweepPoint] = []
    seen: set[str] = set()
    for model in models:
        for values in itertools.product(*(axis.values for axis in axes)):
            options = {axis.key: value for axis, value in zip(axes, values)}
            point_arguments = list(shared.arguments)
            for axis, value in zip(axes, values):
                point_arguments += axis.arguments(value)
            key = point_key(model, options, shared.identity, validate, versions)
            if key not in seen:
                seen.add(key)
                points.append(SweepPoint(model, options, tuple(point_arguments), dict(shared.given), key))
    return points
