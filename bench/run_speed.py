"""RunNetwork speed: this tree against an older commit (080000f) and against ONNX Runtime, gcc and clang.

For every network (Deeploy's peer models and the three MLPerf networks in
``../shared/bench/deeploy-mlperf``) and every compiler, the generic-c program
is built twice in one run — once by this working tree, once by the base
commit's own code (extracted with ``git archive`` and put first on
``PYTHONPATH``; bench/speed_side.py does the build with API calls both sides
share) — with the same ``CC`` and the build flags each side's folder uses.
Both programs' outputs are checked (bit-exact for integer networks) before
anything is timed.  Timing alternates base and head for ``--rounds`` rounds of
``--repeats`` RunNetwork calls each, and keeps each side's best: the two see
the same machine state.  The last column is ONNX Runtime on the same inputs,
one thread, all graph optimisations (RequantShift rewritten into standard ops
by bench/ort_equivalent.py and checked against the expected outputs).

Issue 21's targets (speed-up over 080000f) are printed beside each row.  Against
any other base (a refactor's starting point, say) the target is "no slower":
a speed-up of at least ``--no-slower`` (0.97 by default: run-to-run noise of
the best-of timing here is about 2 %).  The ``outputs`` column compares the
bytes both programs wrote for the same inputs (``same``: a refactor kept the
network's behaviour exactly, float networks included).

    python bench/run_speed.py [--base 080000f] [--compilers gcc,clang] [--filter TEXT] [--kernels]
                              [--repeats 20] [--rounds 5] [--no-slower 0.97]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
REPOSITORY = BENCH.parent
SHARED = REPOSITORY.parent / "shared"
PLUGIN_FOLDERS = ("generic_c", "pulp_cluster", "minimalloc", "tetris")
TARGETS = {
    "ReduceMean": 7.6, "ImageClassification": 4.4, "EEGFormer": 1.8, "miniMobileNet": 1.7, "VisualWakeWords": 1.5,
    "KeywordSpotting": 1.4, "Transformer_DeepQuant": 1.9, "CCT_1_16_16_8": 1.1,
}


@dataclass(frozen=True)
class Network:
    """One benchmark network: its folder (network.onnx, inputs.npz, outputs.npz) and typing."""

    name: str
    folder: Path
    integer: bool


def networks(contains: str, kernels: bool = False) -> list[Network]:
    """The peer models and the MLPerf benchmark networks whose path contains ``contains``.

    ``kernels`` adds the peer tests' single-operator networks (``Kernels/``): a kernel change is measured on the
    layer it targets, not only diluted in a whole model.
    """
    found = []
    roots = [SHARED / "peer-tests" / "deeploy" / "Models", SHARED / "bench" / "deeploy-mlperf"]
    if kernels:
        roots.append(SHARED / "peer-tests" / "deeploy" / "Kernels")
    for root in roots:
        for model in sorted(root.rglob("network.onnx")):
            path = model.parent.as_posix()
            # a kernel test's folder name (Regular, Bias, ...) repeats: it is named by its path under the peer tests
            name = model.parent.relative_to(root.parent).as_posix() if root.name == "Kernels" else model.parent.name
            if contains in path:
                found.append(Network(name, model.parent, "/FP32/" not in f"{path}/"))
    return found


def extract(commit: str, into: Path) -> None:
    """The commit's tree, as files, in ``into`` (nothing in the repository changes)."""
    archive = subprocess.run(["git", "-C", str(REPOSITORY), "archive", commit], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


def side_path(tree: Path | None) -> str:
    """``PYTHONPATH`` that makes ``tree``'s core and plugins the ones imported (None: the installed tree)."""
    if tree is None:
        return os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([str(tree), *(str(tree / "plugins" / name) for name in PLUGIN_FOLDERS)])


def build(network: Network, tree: Path | None, compiler: str, out: Path) -> dict[str, object]:
    """Build ``network`` with ``tree``'s code and ``compiler``; the program's path and its check."""
    environment = {**os.environ, "PYTHONPATH": side_path(tree), "CC": compiler}
    environment.pop("CFLAGS", None)
    command = [sys.executable, str(BENCH / "speed_side.py"), str(network.folder / "network.onnx"),
               str(network.folder / "inputs.npz"), str(network.folder / "outputs.npz"), "--out", str(out)]
    if network.integer:
        command.append("--integer")
    result = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=out.parent)
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or ["(no message)"]
        raise RuntimeError(f"{network.name}: build failed: {lines[-1]}")
    built: dict[str, object] = json.loads(result.stdout)
    expected_root = (tree or REPOSITORY).resolve()
    if Path(str(built["core"])) != expected_root:
        raise RuntimeError(f"{network.name}: built with the core in {built['core']}, expected {expected_root}")
    return built


def timing_outputs(program: dict[str, object]) -> Path:
    """Where the program writes its outputs while it is timed (beside its inputs, one file per side)."""
    return Path(str(program["input_file"])).with_name("timing-outputs.bin")


def best_nanoseconds(program: dict[str, object], repeats: int) -> float:
    """Best RunNetwork time of ``repeats`` calls, as the harness measures it."""
    command = [str(program["executable"]), str(program["input_file"]), str(timing_outputs(program)), str(repeats)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(result.stdout.split()[1])


def onnxruntime_microseconds(network: Network, repeats: int, rounds: int) -> tuple[float, bool]:
    """ONNX Runtime's best time (µs) on one thread for the same inputs, and whether its outputs match."""
    import onnxruntime as ort

    from deeploy_core.api import reference_inputs
    from deeploy_core.validate.data import load_npz_by_position
    from ort_equivalent import standard_onnx

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(standard_onnx(network.folder / "network.onnx"), options,
                                   providers=["CPUExecutionProvider"])
    inputs = reference_inputs(network.folder / "network.onnx", network.folder / "inputs.npz")
    feeds = {item.name: inputs[item.name].astype(np.float32) for item in session.get_inputs()}
    actual = session.run(None, feeds)
    expected = load_npz_by_position(network.folder / "outputs.npz", len(actual))
    tolerance = 0.0 if network.integer else 1e-3
    ok = all(np.max(np.abs(np.asarray(a, np.float64).reshape(-1) - np.asarray(e, np.float64).reshape(-1)),
                    initial=0.0) <= tolerance for a, e in zip(actual, expected))
    best = float("inf")
    for _ in range(rounds * repeats):
        start = time.perf_counter_ns()
        session.run(None, feeds)
        best = min(best, float(time.perf_counter_ns() - start))
    return best / 1e3, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="080000f", help="commit to compare with (default: 080000f)")
    parser.add_argument("--compilers", default="gcc,clang")
    parser.add_argument("--filter", default="", help="substring of the network's path")
    parser.add_argument("--repeats", type=int, default=20, help="RunNetwork calls per timing round")
    parser.add_argument("--rounds", type=int, default=5, help="alternating base/head rounds")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--kernels", action="store_true", help="also scan the peer tests' Kernels/ networks")
    parser.add_argument("--no-slower", type=float, default=0.97,
                        help="the speed-up that counts as 'not slower' against a base other than 080000f")
    args = parser.parse_args()
    if not (SHARED / "peer-tests" / "deeploy").is_dir():
        print(f"peer networks not found in {SHARED}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(BENCH))
    chosen = networks(args.filter, args.kernels)
    compilers = args.compilers.split(",")
    rows: list[list[str]] = []
    speedups: dict[str, list[float]] = {compiler: [] for compiler in compilers}
    failures = 0
    with tempfile.TemporaryDirectory(prefix="run-speed-") as scratch:
        base_tree = Path(scratch) / "base"
        base_tree.mkdir()
        extract(args.base, base_tree)
        for network in chosen:
            try:
                ort_us, ort_ok = onnxruntime_microseconds(network, args.repeats, args.rounds)
            except Exception as error:  # noqa: BLE001 - ONNX Runtime refuses some integer-typed test graphs
                print(f"{network.name}: ONNX Runtime cannot run it ({str(error).splitlines()[0][:120]})",
                      file=sys.stderr)
                ort_us, ort_ok = float("nan"), False
            for compiler in compilers:
                try:
                    sides = {}
                    for label, tree in (("base", base_tree), ("head", None)):
                        out = Path(scratch) / f"{network.name.replace('/', '_')}-{compiler}-{label}"
                        out.mkdir()
                        sides[label] = build(network, tree, compiler, out)
                except RuntimeError as error:
                    print(error, file=sys.stderr)
                    failures += 1
                    continue
                best = {label: float("inf") for label in sides}
                for _ in range(args.rounds):
                    for label, program in sides.items():
                        best[label] = min(best[label], best_nanoseconds(program, args.repeats))
                ok = all(bool(program["ok"]) for program in sides.values())
                same = len({timing_outputs(program).read_bytes() for program in sides.values()}) == 1
                failures += not ok or not same
                speedup = best["base"] / best["head"]
                speedups[compiler].append(speedup)
                target = TARGETS.get(network.folder.name, 1.0) if args.base == "080000f" else args.no_slower
                rows.append([
                    network.name, compiler, f"{best['base'] / 1e3:.1f}", f"{best['head'] / 1e3:.1f}",
                    f"{speedup:.2f}x", f">= {target}x", "met" if speedup >= target else "MISSED",
                    f"{ort_us:.1f}" + ("" if ort_ok else " (mismatch)"), f"{best['head'] / 1e3 / ort_us:.2f}",
                    "yes" if ok else "NO", "same" if same else "DIFFER",
                ])
    header = ["network", "cc", f"{args.base} µs", "head µs", "speed-up", "target", "", "ORT 1-thread µs",
              "head/ORT", "exact", "outputs"]
    print_table(header, rows, args.markdown)
    for compiler, values in speedups.items():
        if values:
            print(f"{compiler}: median speed-up {statistics.median(values):.2f}x, "
                  f"min {min(values):.2f}x over {len(values)} networks")
    return 1 if failures else 0


def print_table(header: list[str], rows: list[list[str]], markdown: bool) -> None:
    """Rows as aligned text columns or as a Markdown table."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    if markdown:
        print("| " + " | ".join(cell.ljust(width) for cell, width in zip(header, widths)) + " |")
        print("|" + "|".join("-" * (width + 2) for width in widths) + "|")
        for row in rows:
            print("| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " |")
        return
    print("  ".join(cell.ljust(width) for cell, width in zip(header, widths)))
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))


if __name__ == "__main__":
    raise SystemExit(main())
