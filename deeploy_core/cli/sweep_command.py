"""``deeploy-core sweep``: compile models over a grid of options on dask.distributed; results.jsonl + pareto.html.

This module is imported whenever help lists the commands, so it imports
neither dask nor rich: :mod:`deeploy_core.sweep.runner` does, when a sweep
runs.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import click

from deeploy_core.cli.extension_options_help import CompilingCommand
from deeploy_core.cli.model_options import selection_options
from deeploy_core.cli.progress import quiet_option
from deeploy_core.cli.session import CliSession
from deeploy_core.cli.sweep_grid import check_extension_conflicts, grid_points, parse_grid, shared_options
from deeploy_core.cli.sweep_progress import SweepProgress
from deeploy_core.errors import printable_line
from deeploy_core.sweep.point import ModelSource, SweepPoint, short_labels
from deeploy_core.sweep.results import RESULTS_FILE, ResultsWriter, read_results

PARETO_FILE = "pareto.html"


def _record(point: SweepPoint, network: str, outcome: dict[str, Any], versions: dict[str, Any]) -> dict[str, Any]:
    return {"key": point.key, "model": point.model.given, "network": network, "options": point.options,
            "status": outcome["status"], "message": outcome.get("message", ""), "figures": outcome.get("figures", {}),
            "shared_options": point.fixed, "command": point.command_line(), "versions": versions}


def _label(network: str, point: SweepPoint) -> str:
    return " ".join([network, *(f"{key}={value}" for key, value in point.options.items())])


@click.command("sweep", cls=CompilingCommand)
@click.argument("models", nargs=-1, required=True, metavar="MODEL...")
@selection_options
@click.option("--grid", "grid_texts", multiple=True, metavar="KEY=V1,V2,…",
              help="Values of one option to sweep (repeatable; the points are every combination). KEY is a compile "
                   "option's long name without dashes (l1, l2, l3, buffering, allocator, fusion, tiling-strategy, "
                   "cores, memory-hierarchy, tiler, platform, …) or an extension option (what --option takes).")
@click.option("-o", "--output", type=click.Path(path_type=Path, file_okay=False), required=True,
              help=f"Folder for {RESULTS_FILE} and {PARETO_FILE} (created; a rerun resumes in it).")
@click.option("--validate", is_flag=True,
              help="Also build, run and compare each point (validate's checks; a test folder's outputs.npz is the "
                   "reference, else ONNX Runtime).")
@click.option("--scheduler", metavar="tcp://HOST:PORT", default=None,
              help="Run on this dask scheduler's workers (default: a local cluster started for the sweep).")
@click.option("--workers", type=click.IntRange(1), default=None,
              help="Workers of the local cluster (default: one per core).")
@click.option("--retries", type=click.IntRange(0), default=2, show_default=True,
              help="Retries of a point whose task fails (a worker's death is retried by the scheduler anyway).")
@quiet_option
@click.pass_context
def sweep_command(ctx: click.Context, models: tuple[Path, ...], grid_texts: tuple[str, ...], output: Path,
                  validate: bool, scheduler: str | None, workers: int | None, retries: int, quiet: bool,
                  **selection: Any) -> None:
    """Compile each MODEL (an .onnx file, or a folder with network.onnx and its inputs.npz/outputs.npz, whose
    sample inputs pick integer input types) at every point of the --grid, as independent tasks on dask, into
    OUTPUT/results.jsonl (one line per point, resumable) and OUTPUT/pareto.html (memory against estimated cycles
    per network, the Pareto front highlighted).  Needs the 'sweep' extra."""
    from deeploy_core.sweep.runner import require_distributed

    require_distributed()
    session: CliSession = ctx.obj
    host = session.host
    sources = [ModelSource.from_argument(str(model)) for model in models]
    labels = short_labels(sources)
    axes = parse_grid(grid_texts, ctx, host)
    shared = shared_options(ctx, selection)
    check_extension_conflicts(axes, shared.given)

    from deeploy_core.plugins.selection import PluginSelection
    from deeploy_core.sweep.task import plugin_switches, tool_versions

    versions = tool_versions(host)
    switches = plugin_switches(PluginSelection.from_options(session.environ, session.no_plugins, session.disabled))
    points = grid_points(sources, axes, shared, validate, versions)
    output.mkdir(parents=True, exist_ok=True)
    results_path = output / RESULTS_FILE
    stored = read_results(results_path).records
    todo = [point for point in points if point.key not in stored]
    records = {point.key: stored[point.key] for point in points if point.key in stored}
    started = time.perf_counter()
    where = ""
    unfinished: list[str] = []
    with SweepProgress(len(todo), quiet) as progress:
        if todo:
            from deeploy_core.sweep.runner import dask_client, run_on_dask

            with ResultsWriter(results_path) as writer, dask_client(scheduler, workers) as (client, where):
                def on_result(point: SweepPoint, outcome: dict[str, Any]) -> None:
                    record = _record(point, labels[point.model.given], outcome, versions)
                    writer.append(record)
                    records[point.key] = record
                    progress.point(_label(labels[point.model.given], point), record)

                def on_failure(failure: Any) -> None:
                    unfinished.append(failure.reason)
                    progress.unfinished_point(_label(labels[failure.point.model.given], failure.point), failure.reason)

                tasks = [(point, point.task(validate, switches, versions)) for point in todo]
                run_on_dask(client, tasks, retries, on_result, on_failure)

    from deeploy_core.sweep.pareto import pareto_html

    networks: dict[str, list[dict[str, Any]]] = {labels[source.given]: [] for source in sources}
    for point in points:
        if point.key in records:
            networks[labels[point.model.given]].append(records[point.key])
    page, fronts = pareto_html("deeploy-core sweep: memory against cycles", networks)
    pareto_path = output / PARETO_FILE
    pareto_path.write_text(page, encoding="utf-8")

    counts = {status: sum(1 for point in points if records.get(point.key, {}).get("status") == status)
              for status in ("ok", "infeasible", "error")}
    grid_size = math.prod(len(axis.values) for axis in axes)
    click.echo(f"sweep: {len(points)} points ({len(sources)} model{'s' if len(sources) != 1 else ''} x {grid_size}): "
               f"{len(todo) - len(unfinished)} computed"
               + (f" on {where} in {time.perf_counter() - started:.1f} s" if todo else "")
               + f", {len(points) - len(todo)} already in {RESULTS_FILE}")
    click.echo(f"  {counts['ok']} ok, {counts['infeasible']} infeasible, {counts['error']} error"
               + (f", {len(unfinished)} not finished" if unfinished else ""))
    click.echo(f"  {results_path}")
    click.echo(f"  {pareto_path} (Pareto front: "
               + ", ".join(f"{name} {count} of {len(networks[name])}" for name, count in fronts.items()) + ")")
    if unfinished:  # not the user's mistake (exit code 2 is for those): the sweep is incomplete
        click.echo(printable_line(f"error: {len(unfinished)} point(s) not finished, nothing recorded for them (rerun "
                                  f"the same command to retry them): {unfinished[0]}"), err=True)
        ctx.exit(1)
