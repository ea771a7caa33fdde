"""Run a registered allocator on allocation instances and print how it did.

    python bench/alloc.py --allocator NAME [--capacity N] [--time-limit S] [--output SOLUTION.csv|DIR]
                          [--option NAME=VALUE …] INSTANCE.csv…

Instances are ``id,lower,upper,size`` CSVs (half-open lifetimes): the published MiniMalloc benchmarks
(``../shared/bench/alloc/minimalloc-challenging/``, capacity in the file name) and the peer networks'
arenas exported by ``bench/export_alloc_instances.py``. Without a capacity (none given, none in the file
name) the allocator minimises the peak. ``--option NAME=VALUE`` sets an option the allocator declares, checked
against its schema exactly as ``deeploy-core compile --option`` checks it (``deeploy-core plugins --json`` lists
them), e.g. ``--option mode=minimise`` for MiniMalloc; ``--time-limit S`` sets its ``time_limit``. Every solution is
checked by the core's independent verifier.

Per instance: buffers, lower bound (max live bytes), peak found, gap to the bound, whether it was solved
at the capacity, and the time. Solutions are written as ``id,lower,upper,size,offset`` (one instance:
``--output`` is the file; several: a folder receiving ``<instance>.solution.csv``). The exit code is 1
when any instance is not solved, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from deeploy_core.allocation import find_allocation_errors, read_instance, write_solution
from deeploy_core.errors import DeeployError
from deeploy_core.options.assignments import OptionAssignment, parse_option_text
from deeploy_core.options.resolution import SelectedExtension, resolve_options
from deeploy_core.plugins import PluginHost, PluginSelection


def make_allocator(host: PluginHost, name: str, time_limit: float | None, texts: list[str]) -> Any:
    """The allocator ``name`` made with the options given, resolved like a compile resolves them: only what the
    allocator declares, typed and range-checked, defaults for the rest."""
    assignments = [parse_option_text(text) for text in texts]
    if time_limit is not None:
        assignments.append(OptionAssignment("time_limit", time_limit, f"--time-limit {time_limit:g}"))
    selected = [SelectedExtension("allocator", host.extension("allocator", name))]
    installed = [SelectedExtension("allocator", extension) for extension in host.extensions("allocator")]
    values = resolve_options(selected, assignments, installed).values_of("allocator", name)
    return host.create("allocator", name, **values)


def solution_path(output: Path | None, instance: Path, several: bool) -> Path | None:
    if output is None:
        return None
    if several:
        output.mkdir(parents=True, exist_ok=True)
        return output / f"{instance.stem}.solution.csv"
    return output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--allocator", required=True)
    parser.add_argument("--capacity", type=int, default=None, help="bytes (default: from the file name, else minimise)")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds, passed to the allocator")
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="an option the allocator declares (repeatable)")
    parser.add_argument("instances", nargs="+", type=Path)
    args = parser.parse_args()
    try:
        host = PluginHost.discover(PluginSelection.from_options(os.environ))
        allocator = make_allocator(host, args.allocator, args.time_limit, args.option)
        problems = [(path, read_instance(path, args.capacity)) for path in args.instances]
    except DeeployError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    header = f"{'instance':36} {'buffers':>7} {'lower bound':>11} {'peak':>9} {'gap %':>6} {'capacity':>9} {'solved':>6} {'time s':>8}"
    print(header)
    print("-" * len(header))
    unsolved = total = 0.0
    for path, problem in problems:
        started = time.perf_counter()
        solution = allocator.solve(problem)
        elapsed = time.perf_counter() - started
        total += elapsed
        errors = find_allocation_errors(problem, solution) if solution.feasible else []
        solved = solution.feasible and not errors
        bound = problem.lower_bound()
        peak = solution.peak(problem) if solution.offsets else 0
        gap = f"{100 * (peak - bound) / bound:.1f}" if solution.offsets and bound else "-"
        capacity = str(problem.capacity) if problem.capacity is not None else "-"
        print(f"{path.name:36} {len(problem.blocks):>7} {bound:>11} {peak if solution.offsets else '-':>9} {gap:>6} "
              f"{capacity:>9} {'yes' if solved else 'NO':>6} {elapsed:>8.2f}", flush=True)
        if errors:
            print(f"  invalid solution: {errors[0]}")
        elif not solution.feasible:
            print(f"  {solution.reason}")
        unsolved += not solved
        target = solution_path(args.output, path, len(problems) > 1)
        if target is not None and solved:
            write_solution(target, problem, solution)
    print(f"{len(problems) - int(unsolved)} of {len(problems)} solved, {total:.2f} s in total")
    return 1 if unsolved else 0


if __name__ == "__main__":
    raise SystemExit(main())
