"""Fuzz the compiler against ONNX Runtime with random valid graphs (the long profile of the fuzz tests).

Every drawn graph (float32, QDQ int8 compiled in exact mode, or QDQ int8
compiled in fixed-point mode; see ``deeploy_core.testing.fuzz``) is compiled
for each platform with a drawn target (generic C untiled or tiled into a
random L1; the PULP cluster on 8 cores, drawn L1, single or double
buffering), built with the system C compiler, run twice and compared with
ONNX Runtime: float within 1e-4 absolute + 1e-4 relative, QDQ exact bit for
bit, QDQ fixed-point within one quantisation step.

Prints the counts (graphs generated; compiles attempted, compiled, run,
matched, mismatches, crashes, clean rejections), the coverage per operator and
per drawn feature, and the wall time.  Failing graphs are saved with a note
of what went wrong.  Exits 1 on any mismatch or crash.

    python bench/fuzz.py [--graphs 500] [--seed 0] [--platforms generic-c,pulp-cluster] [--flavours float,qdq,qdq-fixed]
                         [--keep DIR] [--cflags=-O1]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import onnx
from hypothesis import HealthCheck, Phase, given, seed, settings

from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.testing.fuzz.cases import FLAVOURS, FuzzCase, fuzz_cases
from deeploy_core.testing.fuzz.check import KINDS, Outcome, check_graph
from deeploy_core.testing.fuzz.targets import PLATFORMS
from deeploy_core.validate import Toolchain


STAGES = ("compile", "build", "run", "compare")


class Tally:
    """Counts per (platform, flavour) and per operator, and where the failures were saved."""

    def __init__(self, keep: Path, slow: float) -> None:
        self.keep = keep
        self.slow = slow
        self.graphs: Counter[str] = Counter()
        self.outcomes: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        self.unjudged: Counter[str] = Counter()
        """Fixed-point outputs run but not compared, and all outputs of fixed-point compiles."""
        self.reached: Counter[str] = Counter()
        """Compiles that got past each stage."""
        self.modes: Counter[tuple[str, str]] = Counter()
        self.ops: dict[str, Counter[str]] = defaultdict(Counter)
        self.features: Counter[str] = Counter()
        self.rejections: Counter[str] = Counter()
        self.saved: list[str] = []
        self.slowest: list[tuple[float, str, str]] = []
        """(seconds, where, stage times) of the slowest compiles."""

    def graph(self, case: FuzzCase) -> None:
        """Count a drawn graph and what it covers (before any compile, so coverage counts every graph)."""
        self.graphs[case.graph.flavour] += 1
        self.features.update(name for name, _ in case.graph.features)
        for op in case.graph.ops:
            self.ops[op]["graphs"] += 1

    def outcome(self, case: FuzzCase, outcome: Outcome) -> None:
        """Count one compile's outcome; save the graph if it failed or was slow."""
        platform, flavour = outcome.target.platform, case.graph.flavour
        self.outcomes[(platform, flavour)][outcome.kind] += 1
        if flavour == "qdq-fixed" and outcome.stage == "compare":
            self.unjudged["unjudged"] += outcome.unjudged
            self.unjudged["outputs"] += len(case.graph.model.graph.output)
        passed = STAGES[:STAGES.index(outcome.stage)] if outcome.kind != "match" else STAGES
        self.reached.update(passed)
        target = outcome.target
        self.modes[(platform, target.mode + (f" {target.tiling_strategy}" if target.mode == "tiled" else ""))] += 1
        for op in case.graph.ops:
            self.ops[op][outcome.kind] += 1
        if outcome.seconds:
            nodes = len(case.graph.model.graph.node)
            where = f"graph {sum(self.graphs.values())} ({flavour}, {nodes} nodes) on {outcome.target.describe()}"
            stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in outcome.seconds.items())
            self.slowest = sorted([*self.slowest, (sum(outcome.seconds.values()), where, stages)], reverse=True)[:5]
        if outcome.kind == "rejected":
            self.rejections[outcome.detail.splitlines()[0][:140]] += 1
        if outcome.kind in ("mismatch", "crash") or sum((outcome.seconds or {}).values()) > self.slow:
            self.save(case, outcome)

    def save(self, case: FuzzCase, outcome: Outcome) -> None:
        """The model and a note (target, stage, times, error, nodes) in the keep folder, to reproduce it."""
        kind = outcome.kind if outcome.kind != "match" else "slow"
        stem = f"{sum(self.graphs.values()):05d}-{kind}-{outcome.target.platform}-{case.graph.flavour}"
        onnx.save(case.graph.model, self.keep / f"{stem}.onnx")
        (self.keep / f"{stem}.txt").write_text(
            f"target: {outcome.target}\nflavour: {case.graph.flavour}\ndata seed: {case.graph.seed}\n"
            f"stage: {outcome.stage}\nseconds: {outcome.seconds}\n\n"
            f"{outcome.detail}\n\n{case.graph.describe()}\n",
            encoding="utf-8")
        self.saved.append(stem)
        print(f"  {kind} ({outcome.stage}) on {outcome.target.describe()}: {stem}.onnx", flush=True)
        if outcome.detail.strip():
            print(f"    {outcome.detail.strip().splitlines()[-1][:200]}", flush=True)

    def failures(self) -> int:
        """Mismatches and crashes: what makes the run fail (clean rejections are listed, not failures)."""
        return sum(c["mismatch"] + c["crash"] for c in self.outcomes.values())


def print_summary(tally: Tally, seconds: float) -> None:
    """Counts, outcomes per platform and flavour, op and feature coverage, rejections, slowest checks, time."""
    total: Counter[str] = Counter()
    for counts in tally.outcomes.values():
        total.update(counts)
    compiles = sum(total.values())
    flavours = ", ".join(f"{flavour} {count}" for flavour, count in sorted(tally.graphs.items()))
    print(f"\ngraphs generated: {sum(tally.graphs.values())} ({flavours})")
    print(f"compiles: {compiles}  compiled: {tally.reached['compile']}  built: {tally.reached['build']}  "
          f"run: {tally.reached['run']}  "
          f"matched: {total['match']}  mismatches: {total['mismatch']}  crashes: {total['crash']}  "
          f"rejected: {total['rejected']}")
    print(f"\n{'platform':14} {'flavour':9} " + " ".join(f"{kind:>9}" for kind in KINDS))
    for (platform, flavour), counts in sorted(tally.outcomes.items()):
        print(f"{platform:14} {flavour:9} " + " ".join(f"{counts[kind]:>9}" for kind in KINDS))
    if tally.unjudged["outputs"]:
        judged = tally.unjudged["outputs"] - tally.unjudged["unjudged"]
        print(f"qdq-fixed outputs compared: {judged} of {tally.unjudged['outputs']} (the others follow a second "
              "rounding and are only run)")
    modes = ", ".join(f"{platform} {mode} {count}" for (platform, mode), count in sorted(tally.modes.items()))
    print(f"\ncompile modes: {modes}")
    print(f"\n{'op':20} {'graphs':>7} " + " ".join(f"{kind:>9}" for kind in KINDS))
    for op, counts in sorted(tally.ops.items()):
        print(f"{op:20} {counts['graphs']:>7} " + " ".join(f"{counts[kind]:>9}" for kind in KINDS))
    print("\nfeatures (graphs): " + ", ".join(f"{name} {count}" for name, count in sorted(tally.features.items())))
    if tally.rejections:
        print("\nrejections:")
        for reason, count in tally.rejections.most_common():
            print(f"  {count:>4}  {reason}")
    print("\nslowest checks:")
    for spent, where, stages in tally.slowest:
        print(f"  {spent:6.1f} s  {where}: {stages}")
    if tally.saved:
        print(f"\n{len(tally.saved)} failing or slow graphs saved in {tally.keep}")
    print(f"\nwall time: {seconds:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graphs", type=int, default=500, help="graphs to draw (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    parser.add_argument("--platforms", default=",".join(PLATFORMS))
    parser.add_argument("--flavours", default=",".join(FLAVOURS))
    parser.add_argument("--max-layers", type=int, default=6)
    parser.add_argument("--keep", type=Path, help="folder for failing graphs (default: a new temporary folder)")
    parser.add_argument("--keep-slow", type=float, default=60.0, metavar="SECONDS",
                        help="also save graphs whose check took longer (default 60)")
    parser.add_argument("--cflags", default="-O1", help="extra C flags after the runtime's (default -O1: builds faster)")
    args = parser.parse_args()
    platforms, flavours = tuple(args.platforms.split(",")), tuple(args.flavours.split(","))
    host = PluginHost.discover(PluginSelection.from_options(os.environ))
    known = {extension.name for extension in host.extensions("platform")}
    if missing := [p for p in platforms if p not in known]:
        print(f"platforms not installed: {', '.join(missing)}", file=sys.stderr)
        return 2
    keep = args.keep or Path(tempfile.mkdtemp(prefix="deeploy-fuzz-"))
    keep.mkdir(parents=True, exist_ok=True)
    toolchain = Toolchain.from_environment(extra_flags=tuple(shlex.split(args.cflags)))
    tally = Tally(keep, args.keep_slow)
    scratch = Path(tempfile.mkdtemp(prefix="deeploy-fuzz-work-"))
    cache = scratch / "runtime-cache"
    cache.mkdir()

    @seed(args.seed)
    @settings(max_examples=args.graphs, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=fuzz_cases(flavours, platforms, args.max_layers))
    def fuzz(case: FuzzCase) -> None:
        tally.graph(case)
        for index, target in enumerate(case.targets):
            outcome = check_graph(case.graph, target, host, scratch / f"case{index}", cache, toolchain)
            tally.outcome(case, outcome)
        done = sum(tally.graphs.values())
        if done % 50 == 0:
            print(f"{done} graphs, {tally.failures()} failures, {time.perf_counter() - start:.0f} s", flush=True)

    start = time.perf_counter()
    fuzz()
    print_summary(tally, time.perf_counter() - start)
    shutil.rmtree(scratch, ignore_errors=True)
    return 1 if tally.failures() else 0


if __name__ == "__main__":
    raise SystemExit(main())
