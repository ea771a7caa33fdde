"""``deeploy-core validate``: compile, build with the C compiler, run, compare."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

import click
from rich.console import Console

from deeploy_core.api import validate_model
from deeploy_core.cli.extension_options_help import CompilingCommand
from deeploy_core.cli.model_argument import folder_data, model_display_name
from deeploy_core.cli.compile_command import plot_settings
from deeploy_core.cli.model_options import compile_options, model_options
from deeploy_core.cli.profile_table import profile_footer, profile_table
from deeploy_core.cli.progress import print_timings, quiet_option, stage_progress
from deeploy_core.cli.session import CliSession
from deeploy_core.cli.tolerance_options import ATOL_HELP, RTOL_HELP
from deeploy_core.cli.table_output import TextTable, print_table
from deeploy_core.cli.target_table import target_lines, target_table
from deeploy_core.errors import printable_line
from deeploy_core.report.layer_profile import LayerProfile, layer_profile
from deeploy_core.report.profile_page import write_profile_page
from deeploy_core.validate.reference_kind import describe_reference
from deeploy_core.validate.target_result import TargetRun

VALIDATION_COLUMNS = ("output", "max |ref|", "max abs error", "max rel error", "max LSB", "cosine", "mismatches",
                      "rule", "status")
"""The comparison table; drawn by rich only where every cell fits on one line, else plain (never a cut number)."""


@click.command("validate", cls=CompilingCommand)
@model_options
@click.option("--inputs", "inputs_npz", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="Inputs (.npz, bound to graph inputs by position); default: seeded random data.")
@click.option("--outputs", "outputs_npz", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="Golden outputs (.npz, by position); default: ONNX Runtime.")
@click.option("--reference", "reference", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              help="The .tflite file MODEL was converted from: LiteRT's reference kernels (BUILTIN_REF) run it on the "
                   "same inputs as the reference (needs the quant extra); inputs and outputs matched by position.")
@click.option("--atol", type=float, default=None, help=ATOL_HELP)
@click.option("--rtol", type=float, default=None, help=RTOL_HELP)
@click.option("--lsb-tolerance", type=click.FloatRange(0), default=None,
              help="Judge quantised outputs in quantisation steps instead (default: 1 with --quantization fixed-point).")
@click.option("--repeats", type=click.IntRange(1), default=3, show_default=True,
              help="RunNetwork calls (all must give identical outputs; the best time is shown).")
@click.option("--build-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Keep the build here (default: a temporary folder).")
@click.option("--profile", is_flag=True,
              help="Build with a clock read between layers and print each layer's best time (with its op, kernel, "
                   "MACs and share), and write the per-layer chart to --profile-html.")
@click.option("--profile-html", type=click.Path(path_type=Path, dir_okay=False), default=Path("profile.html"),
              show_default=True, help="Where --profile writes its page (a file there that is not such a page is "
                                      "never replaced).")
@quiet_option
@click.pass_obj
def validate_command(
    session: CliSession,
    model: Path,
    inputs_npz: Path | None,
    outputs_npz: Path | None,
    reference: Path | None,
    atol: float | None,
    rtol: float | None,
    lsb_tolerance: float | None,
    repeats: int,
    build_dir: Path | None,
    profile: bool,
    profile_html: Path,
    quiet: bool,
    **selection: object,
) -> None:
    """Compile MODEL, build and run it, and compare with ONNX Runtime, --outputs or LiteRT (--reference).

    With --profile, also time every layer and write a chart of time and memory per layer.

    Float outputs pass when their largest error is at most 1e-4 of the
    reference's max |value| and their cosine similarity at least 0.9999; a
    reference of zeros fails as too small to judge unless --atol is given.
    Integer outputs must match exactly.  Exit code 1, with one line per
    failing output on stderr, when an output fails.

    With --inputs, float-declared inputs of an integer network take the integer
    types Deeploy's rule reads off the arrays (one line on stderr says which).

    A platform with a board (cortex-m4, cortex-m7) is validated on the board:
    the folder's Makefile cross-builds a harness with the inputs compiled in,
    the board's emulator (QEMU) runs it, and its printed outputs are compared.
    When unicorn, capstone and pyelftools are installed, the same program's
    instructions and estimated cycles are counted per layer (shown, and added
    to report.json's "target" with --build-dir).  CMSIS-NN is found through
    CMSIS_NN_PATH or --option cmsis_nn_path=PATH.
    """
    options = compile_options(model, **selection)  # type: ignore[arg-type]
    if lsb_tolerance is None and options.quantization == "fixed-point":
        # TFLite's arithmetic: exact against LiteRT on the .tflite file; against ONNX Runtime a step per layer.
        lsb_tolerance = 0.0 if reference is not None else 1.0
    inputs_npz, folder_outputs, from_folder = folder_data(inputs_npz, outputs_npz)
    outputs_npz = outputs_npz if reference is not None else folder_outputs  # --reference names the expected values
    notices: list[str] = [from_folder] if from_folder else []
    try:
        with stage_progress(f"validating {model.name}", quiet) as progress:
            generated, result = validate_model(
                model, options, session.host, inputs_npz, outputs_npz, atol, rtol, repeats, build_dir,
                progress=progress, lsb_tolerance=lsb_tolerance, notice=notices.append, reference=reference,
                profile=profile,
            )
            build_and_run = progress.seconds_since("build and run")
    finally:
        for line in notices:  # after the spinner, and before an error line if validation fails
            click.echo(printable_line(line), err=True)
    table = TextTable(VALIDATION_COLUMNS, title=f"{model.name} on {options.platform} "
                                                 f"(reference: {describe_reference(reference, outputs_npz)})",
                      numeric=frozenset(VALIDATION_COLUMNS[1:7]))
    for comparison in result.comparisons:
        colour = "red" if not comparison.ok else "yellow" if comparison.warning else "green"
        lsb, relative = comparison.max_lsb_error, comparison.max_relative_error
        table.add_row(comparison.name, f"{comparison.scale:.3g}", f"{comparison.max_abs_error:.3g}",
                      "-" if relative is None else f"{relative:.3g}", "-" if lsb is None else f"{lsb:.3g}",
                      f"{comparison.cosine:.6f}", f"{comparison.mismatches}/{comparison.size}",
                      comparison.rule.describe(), f"{comparison.status}{' (see warning)' if comparison.warning else ''}",
                      style={"status": colour})
    for line in result.warnings:  # the table's "ok" alone would read as a success
        click.echo(printable_line(f"warning: {line}"), err=True)
    console = Console(soft_wrap=True)
    print_table(console, table)
    if result.target is not None:
        show_target(console, result.target, generated.report, model_display_name(model), profile)
    else:
        console.print(f"best RunNetwork time: {result.best_ns / 1e3:.1f} µs over {repeats} run(s)", highlight=False)
    if profile and result.target is None:
        measured = layer_profile(generated.report, result.layer_ns, repeats, plot_settings(generated.report))
        show_profile(console, replace(measured, network=model_display_name(model)), profile_html)
    # Building starts by writing the files (timed as ``write``): not counted twice.
    build_and_run -= generated.timings.get("stages", {}).get("write", 0.0)
    print_timings(generated.timings, quiet, {"build and run": build_and_run})
    if not result.ok:
        for line in result.failures:
            click.echo(printable_line(f"error: {line}"), err=True)
        if options.quantization == "fixed-point" and reference is None and outputs_npz is None:
            click.echo("hint: fixed-point computes TFLite's integer arithmetic, which may round a step away from ONNX "
                       "Runtime in each layer; compare with the .tflite file (--reference MODEL.tflite) or use "
                       "--quantization exact", err=True)
        raise SystemExit(1)


def show_profile(console: Console, profile: LayerProfile, page: Path) -> None:
    """The per-layer table, the lines that say what its figures are, and the page."""
    print_table(console, profile_table(profile))
    for line in profile_footer(profile):
        console.print(line, highlight=False)
    write_profile_page(page, profile)
    console.print(f"wrote {page}", highlight=False, markup=False)


def show_target(console: Console, run: TargetRun, report: Mapping[str, Any], network: str, profile: bool) -> None:
    """A board run: the per-layer instruction counts (when counted) and the totals, instead of host times."""
    table = target_table(run, report, network)
    if table is not None:
        print_table(console, table)
    for line in target_lines(run):
        console.print(line, highlight=False, markup=False)
    if profile:
        console.print("--profile: on a board the instruction counts above take the place of host times; no page "
                      "written", highlight=False, markup=False)
