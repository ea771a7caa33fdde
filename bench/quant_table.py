"""Issue 30's table: Keras networks quantised by TFLiteConverter and converted by tf2onnx, compiled with no flags.

For each network of deeploy_core.testing.models.keras_mlperf (the four MLPerf
Tiny networks and two small ones) and each conversion (tf2onnx --tflite of
the int8 file, the same with --dequantize, tf2onnx --tflite of the float
file), one row:

* generic-c, pulp-cluster: compiles with no flags and runs (pulp-cluster on
  its host emulator, on --pulp-samples inputs) within the judged error;
* float layers: report.json's layers with a float output (generic-c);
* arena: report.json's arena bytes, and int8's as a fraction of the float
  model's;
* RunNetwork: the validation harness's timed RunNetwork on the host
  (generic-c, the build validate uses): a network's three builds take turns
  for --rounds rounds of --repeats calls each and keep their best, so all see
  the same machine load (this machine is shared); int8's as a fraction of
  float's;
* max LSB vs ORT: exact mode (the default) against validate's ONNX Runtime
  reference over --samples seeded inputs (integer outputs: steps);
* max LSB vs LiteRT: --quantization fixed-point against LiteRT's reference
  kernels on the .tflite (int8 rows only).

A failure is shown in its cell ("error: ..."), not raised.  Needs the quant
extra (make quant); conversions are cached as the tests' are.

    python bench/quant_table.py [--networks resnet8,dscnn] [--samples 20] [--repeats 20] [--rounds 5] [--pulp-samples 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.models.keras_mlperf import MLPERF_TINY, SMALL
from deeploy_core.testing.quant_checks import float_layers, litert_reference, ort_reference, random_samples, worst_steps
from deeploy_core.testing.tflite_export import ConvertedNetwork, converted
from deeploy_core.validate import Toolchain, build_executable, run_network

PRECISIONS = ("int8", "int8-dequantize", "float")
COLUMNS = ("model", "exporter", "precision", "generic-c", "pulp-cluster", "float layers", "arena B", "arena / float",
           "RunNetwork µs", "time / float", "max LSB vs ORT (exact)", "max LSB vs LiteRT (fixed-point)")


@dataclass
class Row:
    model: str
    precision: str
    cells: dict[str, str] = field(default_factory=dict)
    arena: int | None = None
    time_us: float | None = None
    timer: Callable[[], float] | None = None  # one timed batch of RunNetwork calls (ns), set once the build ran


def make_host() -> PluginHost:
    from deeploy_generic_c import plugin as generic_c_plugin
    from deeploy_pulp_cluster import plugin as pulp_cluster_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return host


def _short(error: BaseException) -> str:
    line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return f"error: {line[:90]}{'…' if len(line) > 90 else ''}"


def _attempt(row: Row, column: str, action: Callable[[], str]) -> None:
    try:
        row.cells[column] = action()
    except Exception as error:  # noqa: BLE001 - a failure is a cell of the table
        row.cells[column] = _short(error)


def _steps(worst: dict[str, float]) -> str:
    return f"{max(worst.values(), default=0.0):g}"


def measure(files: ConvertedNetwork, precision: str, host: PluginHost, folder: Path, cache: Path,
            args: argparse.Namespace) -> Row:
    model = {"int8": files.int8_onnx, "int8-dequantize": files.int8_dequantize_onnx, "float": files.float_onnx}[precision]
    row = Row(files.name, precision)
    toolchain = Toolchain.from_environment()

    def built(platform: str, quantization: str, where: str) -> tuple[Any, Path]:
        options = CompileOptions(platform=platform) if quantization == "exact" else \
            CompileOptions(platform=platform, quantization=quantization)
        _, generated = compile_model(model, options, host)
        return generated, build_executable(generated, folder / where, toolchain, cache)

    def generic_c() -> str:
        generated, executable = built("generic-c", "exact", "generic-c")
        samples = random_samples(generated, args.samples)
        row.cells["float layers"] = str(len(float_layers(generated.report)))
        row.arena = int(generated.report["memory"]["arena_bytes"])
        row.cells["arena B"] = f"{row.arena:,}"
        row.timer = lambda: run_network(executable, generated, samples[0], repeats=args.repeats)[1]
        worst = worst_steps(generated, executable, samples, ort_reference(model))
        if precision == "float":  # float outputs: the error is in the output's units, not steps
            row.cells["max LSB vs ORT (exact)"] = f"- (max abs {max(worst.values()):.2g})"
        else:
            row.cells["max LSB vs ORT (exact)"] = _steps(worst)
        return "ok"

    def pulp_cluster() -> str:
        generated, executable = built("pulp-cluster", "exact", "pulp-cluster")
        worst = worst_steps(generated, executable, random_samples(generated, args.pulp_samples), ort_reference(model))
        return "ok" if precision == "float" or max(worst.values()) <= (1 if precision == "int8-dequantize" else 0) \
            else f"runs, {_steps(worst)} LSB off"

    def fixed_point_vs_litert() -> str:
        generated, executable = built("generic-c", "fixed-point", "fixed-point")
        return _steps(worst_steps(generated, executable, random_samples(generated, args.samples),
                                  litert_reference(files.int8_tflite, generated)))

    _attempt(row, "generic-c", generic_c)
    _attempt(row, "pulp-cluster", pulp_cluster)
    if precision == "int8":
        _attempt(row, "max LSB vs LiteRT (fixed-point)", fixed_point_vs_litert)
    return row


def time_in_turns(rows: list[Row], rounds: int) -> None:
    """Each row's best RunNetwork time, the rows taking turns so that a load change hits them alike."""
    best: dict[int, float] = {}
    for _ in range(rounds):
        for index, row in enumerate(rows):
            if row.timer is not None:
                best[index] = min(best.get(index, float("inf")), row.timer())
    for index, nanoseconds in best.items():
        rows[index].time_us = nanoseconds / 1e3
        rows[index].cells["RunNetwork µs"] = f"{nanoseconds / 1e3:,.1f}"


def ratios(rows: list[Row]) -> None:
    """int8 rows' arena and time as fractions of the same network's float row."""
    floats = {row.model: row for row in rows if row.precision == "float"}
    for row in rows:
        base = floats.get(row.model)
        if row.precision == "float" or base is None:
            continue
        if row.arena is not None and base.arena:
            row.cells["arena / float"] = f"{row.arena / base.arena:.2f}"
        if row.time_us is not None and base.time_us:
            row.cells["time / float"] = f"{row.time_us / base.time_us:.2f}"


def markdown(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = {"model": row.model, "exporter": "TFLiteConverter + tf2onnx --tflite", "precision": row.precision,
                 **row.cells}
        lines.append("| " + " | ".join(cells.get(column, "-").replace("|", "/") for column in COLUMNS) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default=",".join((*MLPERF_TINY, *SMALL)))
    parser.add_argument("--samples", type=int, default=20, help="seeded inputs per exactness check")
    parser.add_argument("--pulp-samples", type=int, default=2, help="inputs run on the pulp-cluster emulator")
    parser.add_argument("--repeats", type=int, default=20, help="RunNetwork calls per turn (the best is kept)")
    parser.add_argument("--rounds", type=int, default=5, help="turns of the three builds of a network")
    args = parser.parse_args()
    # Looked up, not imported: tf2onnx imports TensorFlow, which has no business in this process (the conversions
    # run in child processes) and crashes it beside ONNX Runtime and LiteRT.
    absent = [name for name in ("tensorflow", "tf2onnx", "ai_edge_litert") if importlib.util.find_spec(name) is None]
    if absent:
        print(f"error: {', '.join(absent)} not installed: install the quant extra (make quant)", file=sys.stderr)
        return 2
    host = make_host()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="quant-table-") as scratch:
        root = Path(scratch)
        for name in args.networks.split(","):
            files = converted(name)
            mine = [measure(files, precision, host, root / name / precision, root / "runtime", args)
                    for precision in PRECISIONS]
            time_in_turns(mine, args.rounds)
            for row in mine:
                print(f"{name} {row.precision}: {row.cells}", file=sys.stderr, flush=True)
            rows.extend(mine)
    ratios(rows)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
