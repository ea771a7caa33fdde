"""``deeploy-core analyze``: the per-layer table, without writing code."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from deeploy_core.api import compile_model
from deeploy_core.cli.extension_options_help import CompilingCommand
from deeploy_core.cli.level_traffic_text import levels_table, patterns_table, traffic_line
from deeploy_core.cli.model_argument import folder_inputs
from deeploy_core.cli.model_options import compile_options, model_options
from deeploy_core.cli.progress import print_timings, quiet_option, stage_progress
from deeploy_core.cli.session import CliSession
from deeploy_core.cli.table_output import TextTable, drawable, print_table
from deeploy_core.cli.terminal_text import terminal_text
from deeploy_core.frontend.batch_dimension import NOTICE_PREFIX

LAYER_COLUMNS = ("#", "op", "node", "output", "dtype", "MACs", "weights B", "activations B", "offset", "requant")
ESTIMATE_COLUMNS = (("layer", "layer"), ("tiles", "tiles"), ("cycles", "cycles"), ("compute", "compute_cycles"),
                    ("DMA", "dma_cycles"), ("bytes in", "bytes_in"), ("bytes out", "bytes_out"))


@click.command("analyze", cls=CompilingCommand)
@model_options
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@quiet_option
@click.pass_obj
def analyze_command(session: CliSession, model: Path, as_json: bool, quiet: bool, **selection: object) -> None:
    """Show layers, shapes, MACs, memory and arena offsets of MODEL on a platform."""
    if not selection.get("input_types") and selection.get("input_types_from") is None:
        selection["input_types_from"] = folder_inputs()  # a test folder's inputs.npz types its inputs
    options = compile_options(model, **selection)  # type: ignore[arg-type]
    with stage_progress(f"analyzing {model.name}", quiet) as progress:
        _, generated = compile_model(model, options, session.host, progress)
    print_timings(generated.timings, quiet)
    report = generated.report
    if as_json:
        click.echo(json.dumps(report, indent=2, sort_keys=True))
        return
    # One layer per line when it cannot be drawn whole: a wrapped cell would split a node name or a MAC count.
    table = TextTable(LAYER_COLUMNS, title=f"{model.name} on {options.platform}",
                      numeric=frozenset({"#", "MACs", "weights B", "activations B"}))
    for row in report["layers"]:
        output = row["outputs"][0] if row["outputs"] else {"shape": [], "dtype": "-"}
        offsets = ", ".join(str(offset) for offset in row["arena_offsets"].values()) or "-"
        requant = row.get("requantization")
        requant_text = requantisation_text(requant)
        table.add_row(row["index"], row["op"], row["node"], "x".join(map(str, output["shape"])), output["dtype"],
                      row["macs"], row["weight_bytes"], row["activation_bytes"], offsets, requant_text)
    console = Console(soft_wrap=True)
    estimate = estimate_table(report["estimate"]) if "estimate" in report else None
    levels, patterns = levels_table(report), patterns_table(report)
    draw = drawable(console, table, *(extra for extra in (levels, patterns, estimate) if extra is not None))
    print_table(console, table, fallback="plain", draw=draw)
    memory = report["memory"]
    console.print(
        f"ops {report['number_of_ops']}, MACs {report['macs']}, weights {report['weight_bytes']} B, "
        f"arena {memory['arena_bytes']} B (lower bound {memory['lower_bound_bytes']} B, allocator {memory['allocator']})"
    )
    if levels is not None:
        print_table(console, levels, fallback="plain", draw=draw)
        console.print(terminal_text(traffic_line(report) or ""))
    if patterns is not None:
        print_table(console, patterns, fallback="plain", draw=draw)
    if estimate is not None:
        print_table(console, estimate, fallback="plain", draw=draw)
    for warning in report["warnings"]:  # a notice (batch 1 for a dynamic batch) is no warning
        console.print(*([] if warning.startswith(NOTICE_PREFIX) else [terminal_text("warning:", "yellow")]),
                      terminal_text(warning))


def estimate_table(estimate: dict) -> TextTable:
    """A platform's performance estimate (``report["estimate"]``, e.g. a cluster's cost model) per layer."""
    titles = tuple(title for title, _ in ESTIMATE_COLUMNS)
    table = TextTable(titles, title=f"estimated cycles: {estimate['cycles']} in total",
                      numeric=frozenset(titles[1:]))
    for layer in estimate["layers"]:
        table.add_row(*(layer.get(key, "-") for _, key in ESTIMATE_COLUMNS))
    return table


def requantisation_text(requant: dict | None) -> str:
    """A short summary: ``>>S [lo, hi]`` (shift range when per channel) or ``q s=… z=…`` for QuantizeLinear.

    TFLite's arithmetic (``"arithmetic": "tflite"``) writes its exponent signed, negative for a right shift, so it
    reads ``tflite >>S`` or ``tflite <<S``; the float32 kernels of exact mode read ``float32 s=…`` with the scale
    they requantise by (the output's when the kernel dequantises its inputs).
    """
    if not requant:
        return "-"
    if "rqs_out" in requant:  # RequantizedAdd: a group per input and the sum's, whose range is the output's
        return requantisation_text(requant["rqs_out"])
    arithmetic = requant.get("arithmetic")
    zero = f" z={requant['zero_point']}" if not isinstance(requant.get("zero_point"), list) \
        and requant.get("zero_point") else ""
    limits = requant.get("range", "")
    if arithmetic == "tflite":
        shift = requant.get("shift")
        if shift is None:
            return f"tflite{zero} {limits}"
        exponents = shift if isinstance(shift, list) else [shift]
        texts = [(">>" if value <= 0 else "<<") + str(abs(value)) for value in (min(exponents), max(exponents))]
        shift_text = texts[0] if texts[0] == texts[1] else f"{texts[0]}..{texts[1]}"
        return f"tflite {shift_text}{zero} {limits}"
    if "shift" not in requant:
        scale = requant.get("scale", requant.get("output_scale"))
        if scale is None:
            return f"{arithmetic or 'q'}{zero} {limits}"
        scale_text = f"{len(scale)} scales" if isinstance(scale, list) else f"s={scale:.4g}"
        zero_text = "" if isinstance(requant.get("zero_point"), list) else f" z={requant.get('zero_point', 0)}"
        prefix = "float32" if arithmetic == "float32" else "q"
        if requant.get("bias") == "float32":  # exact mode's kernel for an unquantised (float) bias
            prefix += " float-bias"
        return f"{prefix} {scale_text}{zero_text} {limits}"
    shift = requant["shift"]
    shift_text = f"{min(shift)}..{max(shift)}" if isinstance(shift, list) else str(shift)
    return f">>{shift_text}{zero} {limits}"
