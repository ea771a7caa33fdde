"""The whole differential build matrix (issue 29): every network kind × compiler × level × target.

Every network of ``tests/build_matrix_cases.py`` (Deeploy's peer tests untiled
and tiled, drawn fuzz graphs of every flavour, repeated identical layers, the
full-size integer CCT blocks) is compiled once for generic C; its folder is
then built by every entry of ``FULL_MATRIX`` (gcc -O0/-O1/-O2/-O3/-Os, clang
-O0/-O2/-O3/-Oz, each with and without -fno-strict-aliasing, on the host;
arm-none-eabi-gcc and riscv64-unknown-elf-gcc at -Os and -O2, run in QEMU) and
each build's outputs are compared with the host ``gcc -O0`` build's (integers
bit for bit, floats within 1e-6 of the output's max |value|) and with the
goldens.  Prints, as Markdown, one row per build and one column per network
kind (identical / differs / build failed / run failed / unavailable counts),
then every cell that is not identical with the reason.  Exits 1 when any cell
differs or fails (unavailable tools do not count).

The networks are compiled one after the other while ``--jobs`` builds run
beside them (each build is one make at a time).

    python bench/build_matrix.py [--filter TEXT] [--builds TEXT] [--jobs 2] [--keep DIR] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for tests.build_matrix_cases, tests.support

from deeploy_core.testing.build_matrix import (  # noqa: E402
    BASELINE,
    BUILD_FAILED,
    FULL_MATRIX,
    UNAVAILABLE,
    BuildConfig,
    BuildRun,
    Cell,
    build_and_run,
    judge_all,
)
from tests.build_matrix_cases import CompiledCase, MatrixCase, all_cases, compile_case, matrix_host  # noqa: E402
from tests.support.matrix_table import problem_list, status_counts, summary_table  # noqa: E402


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="only networks whose id contains TEXT (e.g. repeated/, peer/)")
    parser.add_argument("--builds", default="", help="only builds whose label contains TEXT (the baseline always runs)")
    parser.add_argument("--jobs", type=int, default=2, help="builds at a time (default 2)")
    parser.add_argument("--keep", type=Path, help="keep the output folders and builds here")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    return parser.parse_args()


def _builds(text: str) -> list[BuildConfig]:
    chosen = [config for config in FULL_MATRIX if text in config.label]
    return chosen if BASELINE in chosen else [BASELINE, *chosen]


def main() -> int:
    arguments = _arguments()
    cases = [case for case in all_cases() if arguments.filter in case.name]
    builds = _builds(arguments.builds)
    scratch = arguments.keep or Path(tempfile.mkdtemp(prefix="dc_build_matrix_"))
    host = matrix_host()
    started = time.perf_counter()
    pending: list[tuple[MatrixCase, CompiledCase | None, str, list[Future[BuildRun]]]] = []
    results: dict[str, list[Cell]] = {}
    kinds = {case.name: case.kind for case in cases}
    print(f"{len(cases)} networks x {len(builds)} builds, {arguments.jobs} at a time; folders in {scratch}",
          file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, arguments.jobs)) as pool:
        for index, case in enumerate(cases):
            folder = scratch / f"{index:03d}"
            try:
                compiled: CompiledCase | None = compile_case(case, host, folder)
                error = ""
            except Exception:  # noqa: BLE001 - a compile that fails is a finding of the matrix, not its end
                compiled, error = None, traceback.format_exc().strip().splitlines()[-1]
            futures = [] if compiled is None else [
                pool.submit(build_and_run, compiled.folder, config, compiled.inputs, folder / "builds", compiled.api)
                for config in builds]
            pending.append((case, compiled, error, futures))
            pending = _collect(pending, results, arguments.keep is None, started, len(cases))
        while pending:
            time.sleep(0.5)
            pending = _collect(pending, results, arguments.keep is None, started, len(cases))
    ordered = {case.name: results[case.name] for case in cases}
    tables = _tables(ordered, kinds, time.perf_counter() - started)
    print(tables)
    if arguments.markdown is not None:
        arguments.markdown.write_text(tables + "\n", encoding="utf-8")
    if arguments.keep is None:
        shutil.rmtree(scratch, ignore_errors=True)
    counts = status_counts(ordered)
    return 1 if sum(count for status, count in counts.items() if status not in ("identical", UNAVAILABLE)) else 0


def _collect(pending: list[tuple[MatrixCase, CompiledCase | None, str, list[Future[BuildRun]]]],
             results: dict[str, list[Cell]], clean: bool, started: float, total: int
             ) -> list[tuple[MatrixCase, CompiledCase | None, str, list[Future[BuildRun]]]]:
    """Judge the networks whose builds have all finished; returns those still running."""
    still = []
    for case, compiled, error, futures in pending:
        if not all(future.done() for future in futures):
            still.append((case, compiled, error, futures))
            continue
        if compiled is None:
            cells = [Cell(BASELINE, BUILD_FAILED, f"deeploy-core compile failed: {error}")]
        else:
            runs = {future.result().config: future.result() for future in futures}
            cells = judge_all(runs, compiled.specs, compiled.golden)
            if clean:
                shutil.rmtree(compiled.folder.parent / "builds", ignore_errors=True)
        results[case.name] = cells
        bad = [cell for cell in cells if not cell.ok and cell.status != UNAVAILABLE]
        verdict = "all identical" if not bad else ", ".join(f"{cell.config.label}: {cell.status}" for cell in bad)
        print(f"[{len(results)}/{total} {time.perf_counter() - started:6.0f} s] {case.name}: {verdict}",
              file=sys.stderr, flush=True)
    return still


def _tables(results: dict[str, list[Cell]], kinds: dict[str, str], seconds: float) -> str:
    counts = status_counts(results)
    parts = [
        "## Build matrix",
        "",
        f"{len(results)} networks, {sum(counts.values())} builds in {seconds / 60:.1f} min: "
        + ", ".join(f"{count} {status}" for status, count in sorted(counts.items())),
        "",
        "Each cell: networks of the kind whose build computes what the host `gcc -O0` build and the goldens "
        "compute (integers bit for bit, floats within 1e-6 x max |value| of gcc -O0; goldens with the peer/fuzz "
        "tolerances).",
        "",
        summary_table(results, kinds),
    ]
    problems = problem_list(results)
    if problems:
        parts += ["", "### Cells that are not identical", "", problems]
    return "\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
