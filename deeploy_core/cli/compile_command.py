"""``deeploy-core compile``: ONNX model → C files and report.json."""

from __future__ import annotations

from pathlib import Path

import click

from deeploy_core.api import compile_model
from deeploy_core.cli.extension_options_help import CompilingCommand
from deeploy_core.cli.model_options import compile_options, model_options
from deeploy_core.cli.output_folder import replace_folder
from deeploy_core.cli.progress import print_timings, quiet_option, stage_progress
from deeploy_core.cli.session import CliSession
from deeploy_core.report.memory_plot import write_memory_plot
from deeploy_core.report.plot_levels import memory_plot_levels


@click.command("compile", cls=CompilingCommand)
@model_options
@click.option("-o", "--output", "output", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Folder for the generated files (created; replaced only with --force).")
@click.option("--force", is_flag=True, help="Replace a non-empty output folder.")
@click.option("--dump-state", is_flag=True, help="Also write the deployer state after each stage into OUTPUT/state/.")
@click.option("--plot", is_flag=True,
              help="Also write the memory plot: OUTPUT/memory.html (inline SVG) and one memory_<level>.svg per level.")
@quiet_option
@click.pass_obj
def compile_command(
    session: CliSession, model: Path, output: Path, force: bool, dump_state: bool, plot: bool, quiet: bool,
    **selection: object
) -> None:
    """Compile MODEL to C: Network.h, Network.c, weights, report.json and timings.json."""
    options = compile_options(model, **selection)  # type: ignore[arg-type]
    with replace_folder(output, force) as staging:
        with stage_progress(f"compiling {model.name}", quiet) as progress:
            state_dir = staging / "state" if dump_state else None
            deployer, generated = compile_model(model, options, session.host, progress, state_dir)
            progress.stage("write")
            written = generated.write(staging)
        if plot:
            title = f"{generated.report['network']}: static memory map"
            written += write_memory_plot(staging, title, memory_plot_levels(deployer.compilation))
        # Last, so that it holds the time spent writing the others; never in report.json (see GeneratedNetwork).
        written.append(generated.write_timings(staging))
    report = generated.report
    click.echo(
        f"{model.name}: {len(report['layers'])} layers, {report['numberOfOps']} ops, "
        f"arena {report['memory']['arena_bytes']} B (lower bound {report['memory']['lower_bound_bytes']} B), "
        f"weights {report['weight_bytes']} B"
    )
    for path in written:
        click.echo(f"  {output / path.name}")
    print_timings(generated.timings, quiet)
