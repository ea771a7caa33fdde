"""``deeploy-core compile``: ONNX model → an output folder that builds on its own."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from deeploy_core.api import compile_model
from deeploy_core.cli.api_options import api_options, network_api
from deeploy_core.cli.extension_options_help import CompilingCommand
from deeploy_core.cli.model_options import compile_options, model_options
from deeploy_core.cli.output_folder import replace_folder
from deeploy_core.cli.progress import print_timings, quiet_option, stage_progress
from deeploy_core.cli.model_argument import folder_data, model_display_name
from deeploy_core.cli.self_test_data import check_data_options, compile_with_data, self_test_options
from deeploy_core.cli.session import CliSession
from deeploy_core.errors import printable_line
from deeploy_core.frontend.batch_dimension import NOTICE_PREFIX
from deeploy_core.tolerance import Tolerance


def listed_entries(output: Path, staging: Path, written: list[Path]) -> list[str]:
    """One line per top-level entry written: a file by its path, a folder by its path and file count."""
    files_below: dict[str, int] = {}
    for path in written:
        top = path.relative_to(staging).parts[0]
        files_below[top] = files_below.get(top, 0) + 1
    return [f"{output / name}" if (staging / name).is_file()
            else f"{output / name}/ ({count} file{'' if count == 1 else 's'})"
            for name, count in sorted(files_below.items())]


@click.command("compile", cls=CompilingCommand)
@model_options
@click.option("-o", "--output", "output", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Folder for the generated files (created; replaced only with --force).")
@click.option("--force", is_flag=True, help="Replace a non-empty output folder.")
@click.option("--dump-state", is_flag=True, help="Also write the deployer state after each stage into OUTPUT/state/.")
@click.option("--plot", is_flag=True,
              help="Also write the memory plot: OUTPUT/memory.html (inline SVG) and one memory_<level>.svg per level.")
@api_options
@self_test_options
@quiet_option
@click.pass_obj
def compile_command(
    session: CliSession, model: Path, output: Path, force: bool, dump_state: bool, plot: bool,
    prefix: str | None, arena: str, weights_section: str | None, arena_section: str | None,
    inputs_npz: Path | None, outputs_npz: Path | None, atol: float | None, rtol: float | None,
    lsb_tolerance: float | None,
    quiet: bool, **selection: object
) -> None:
    """Compile MODEL into OUTPUT: Network.h/.c, weights, the runtime sources it calls, a Makefile and a
    CMakeLists.txt, README.md, report.json and timings.json; with --inputs also a self-test (make -C OUTPUT test)."""
    options = replace(compile_options(model, **selection),  # type: ignore[arg-type]
                      c_api=network_api(prefix, arena, weights_section, arena_section))
    inputs_npz, outputs_npz, from_folder = folder_data(inputs_npz, outputs_npz)
    check_data_options(inputs_npz, outputs_npz)
    if lsb_tolerance is None and options.quantization == "fixed-point":
        lsb_tolerance = 1.0
    notices: list[str] = [from_folder] if from_folder else []
    with replace_folder(output, force) as staging:
        with stage_progress(f"compiling {model.name}", quiet) as progress:
            state_dir = staging / "state" if dump_state else None
            if inputs_npz is not None:
                deployer, generated, self_test = compile_with_data(
                    model, options, session.host, inputs_npz, outputs_npz, Tolerance(atol, rtol, lsb_tolerance),
                    progress, state_dir, notices.append)
                generated.self_test = self_test
            else:
                deployer, generated = compile_model(model, options, session.host, progress, state_dir)
            progress.stage("write")
            written = generated.write(staging)
        if plot:  # the plot's modules (and the tiling state they read) load only when a plot is asked for
            from deeploy_core.report.memory_plot import write_memory_plot
            from deeploy_core.report.plot_levels import memory_plot_levels

            title = (f"{model_display_name(model)} on {options.platform}{plot_settings(generated.report)}: "
                     f"static memory map")
            written += write_memory_plot(staging, title, memory_plot_levels(deployer.compilation))
        # Last, so that it holds the time spent writing the others; never in report.json (see GeneratedNetwork).
        written.append(generated.write_timings(staging))
        listing = listed_entries(output, staging, written)
    report = generated.report
    notices[:0] = [line for line in report["warnings"] if line.startswith(NOTICE_PREFIX)]
    for line in notices:
        click.echo(printable_line(line), err=True)
    click.echo(
        f"{model.name}: {len(report['layers'])} layers, {report['number_of_ops']} ops, "
        f"arena {report['memory']['arena_bytes']} B (lower bound {report['memory']['lower_bound_bytes']} B), "
        f"weights {report['weight_bytes']} B{tiled_summary(report)}"
    )
    for line in listing:
        click.echo(f"  {line}")
    print_timings(generated.timings, quiet)


def tiled_summary(report: dict) -> str:
    """``; L1 peak 31376 of 65536 B, 4.2 M estimated cycles`` for a tiled build ("" otherwise): what a tiled
    compile is about, said in the line every compile prints."""
    tiling = report.get("tiling")
    if not tiling:
        return ""
    level = tiling["compute_level"]
    entry = report.get("memory_levels", {}).get(level, {})
    peak = report.get("level_peaks", {}).get(level, entry.get("used", 0))
    capacity = entry.get("capacity")
    text = f"; {level} peak {peak} B" + (f" of {capacity} B" if capacity is not None else "")
    cycles = report.get("estimated_cycles")
    return text + (f", {cycles} estimated cycles" if cycles else "")


def plot_settings(report: dict) -> str:
    """`` (L1 64000 B, double buffering, 8 cores)``: the options that shape a tiled memory map ("" untiled)."""
    tiling = report.get("tiling")
    if not tiling:
        return ""
    level = tiling["compute_level"]
    capacity = report.get("memory_levels", {}).get(level, {}).get("capacity")
    parts = [f"{level} {capacity} B" if capacity is not None else level, f"{tiling['buffering']} buffering"]
    cores = report.get("cluster", {}).get("cores")
    if cores:
        parts.append(f"{cores} cores")
    return f" ({', '.join(parts)})"
