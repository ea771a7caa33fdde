"""What a dask worker runs for one sweep point: JSON text in, JSON text out.

Only text crosses the wire in either direction (dask moves it; nothing here
turns bytes into objects but :func:`json.loads`).  The point's options arrive
as a command line and are parsed by the very options ``compile`` declares
(:func:`deeploy_core.cli.model_options.model_options`), so a point means what
the same flags mean to ``deeploy-core compile``.

A compile that the compiler refuses is a result, not a failure of the task:
``infeasible`` with the one-line message for a :class:`DeeployError` (e.g.
:class:`~deeploy_core.tiling.errors.TilingInfeasibleError`), ``error`` with
the exception's type and message for anything else, or for outputs that do
not match under ``--validate``.  What makes the point's result untrustworthy
(the model's bytes differ on this worker, other deeploy-core or plugin
versions, an unknown task format) raises instead: the task fails, dask
retries it, and the client records nothing for it, so a rerun tries again.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from deeploy_core.errors import DeeployError, printable_line
from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.plugins.records import PluginStatus
from deeploy_core.sweep.figures import report_figures
from deeploy_core.sweep.point import TASK_FORMAT, file_sha256

_HOSTS: dict[str, PluginHost] = {}
_LOCK = threading.Lock()
"""One compile at a time per worker process (a worker with several threads shares one plugin host)."""


def tool_versions(host: PluginHost) -> dict[str, Any]:
    """deeploy-core's version and every loaded plugin's (distribution → version): part of each point's key."""
    from deeploy_core import __version__

    plugins = {record.distribution: record.version for record in host.plugins(include_builtin=False)
               if record.status in (PluginStatus.OK, PluginStatus.CONFLICT)}
    return {"deeploy-core": __version__, "plugins": dict(sorted(plugins.items()))}


def plugin_switches(selection: PluginSelection) -> dict[str, Any]:
    """A plugin selection as JSON, for the workers to load the same plugins as the client."""
    return {"no_plugins": selection.no_plugins,
            "allow_list": None if selection.allow_list is None else sorted(selection.allow_list),
            "disabled": sorted(selection.disabled)}


def _host(switches: dict[str, Any]) -> PluginHost:
    key = json.dumps(switches, sort_keys=True)
    if key not in _HOSTS:
        allow = switches.get("allow_list")
        selection = PluginSelection(no_plugins=bool(switches.get("no_plugins")),
                                    allow_list=None if allow is None else frozenset(allow),
                                    disabled=frozenset(switches.get("disabled", ())))
        _HOSTS[key] = PluginHost.discover(selection)
    return _HOSTS[key]


def _parse_arguments(model: Path, arguments: list[str]) -> dict[str, Any]:
    """compile's options parsed by compile's own declarations: ``{parameter name: value}``."""
    from deeploy_core.cli.model_options import model_options

    @click.command(add_help_option=False)
    @model_options
    def point(**selection: Any) -> dict[str, Any]:
        return selection

    try:
        parsed = point.main(args=[str(model), *arguments], prog_name="compile", standalone_mode=False)
    except click.ClickException as error:
        raise DeeployError(error.format_message()) from None
    return dict(parsed)


def _compile(task: dict[str, Any], host: PluginHost) -> dict[str, Any]:
    from deeploy_core.api import compile_model, validate_model
    from deeploy_core.cli.model_options import compile_options

    model = Path(task["model"])
    inputs = Path(task["inputs"]) if task.get("inputs") else None
    outputs = Path(task["outputs"]) if task.get("outputs") else None
    selection = _parse_arguments(model, task["arguments"])
    selection.pop("model")
    options = compile_options(model, **selection)
    if task.get("validate"):
        generated, result = validate_model(model, options, host, inputs, outputs, repeats=1)
        figures = report_figures(generated.report, generated.timings)
        worst = max((comparison.max_abs_error for comparison in result.comparisons), default=0.0)
        figures["validation"] = {"ok": result.ok, "reference": "golden" if outputs else "onnxruntime",
                                 "max_abs_error": float(worst),
                                 "mismatches": sum(comparison.mismatches for comparison in result.comparisons)}
        if not result.ok:
            bad = [f"{c.name}: {c.mismatches}/{c.size} mismatches, max abs error {c.max_abs_error:.3g}"
                   for c in result.comparisons if not c.ok]
            return {"status": "error", "message": "validation failed: " + "; ".join(bad), "figures": figures}
        return {"status": "ok", "message": "", "figures": figures}
    if inputs is not None:  # a test folder: its sample inputs pick integer input types, as compile --inputs does
        from deeploy_core.validate.sample_types import sample_types, with_sample_types

        sample = sample_types(model, inputs, options.input_types)
        _, generated = with_sample_types(
            lambda types: compile_model(model, replace(options, input_types=types), host), options.input_types, sample)
    else:
        _, generated = compile_model(model, options, host)
    return {"status": "ok", "message": "", "figures": report_figures(generated.report, generated.timings)}


def run_point(task_text: str) -> str:
    """Compile (and with ``validate``, build, run and compare) one point; the outcome as JSON text."""
    task = json.loads(task_text)
    if task.get("format") != TASK_FORMAT:
        raise RuntimeError(f"sweep task format {task.get('format')!r}: this worker runs format {TASK_FORMAT}; "
                           "client and workers need the same deeploy-core")
    with _LOCK:
        host = _host(task["plugins"])
        mine = tool_versions(host)
        if mine != task["versions"]:
            raise RuntimeError(f"this worker has {json.dumps(mine, sort_keys=True)}, the client "
                               f"{json.dumps(task['versions'], sort_keys=True)}: install the same versions everywhere")
        model = Path(task["model"])
        if not model.is_file() or file_sha256(model) != task["model_sha256"]:
            raise RuntimeError(f"{model} is missing or differs on this worker (workers read the client's paths)")
        try:
            outcome = _compile(task, host)
        except DeeployError as error:
            outcome = {"status": "infeasible", "message": printable_line(str(error)), "figures": {}}
            needed = getattr(error, "needed_bytes", None)
            if needed is not None:
                outcome["figures"] = {"needed_level": getattr(error, "level", None), "needed_bytes": int(needed)}
        except Exception as error:  # noqa: BLE001 - any other failure is this point's result, reported in one line
            outcome = {"status": "error", "message": printable_line(f"{type(error).__name__}: {error}"),
                       "figures": {}}
    return json.dumps(outcome)
