"""Breadth: every default-domain ONNX backend node test case through compile → C → run → compare, per platform.

For each platform, every node test case of the installed onnx whose nodes are
in the default domain is compiled with the defaults, built with the system C
compiler, run on each of its data sets and compared with ONNX's expected
outputs (atol 1e-4, rtol 1e-3).  A case passes as written or with every input
but the first turned into a constant (:mod:`tests.support.node_breadth`).
Prints passed / total per platform and the failures grouped by reason, each
group with the ops it stopped at most often.

    python bench/onnx_node_tests.py [--platforms generic-c,pulp-cluster] [--filter REGEX] [--jobs N]
                                    [--json results.json] [--timeout 120] [--show-stderr]

Cases run in ``--jobs`` worker processes (default: every core); results are
sorted by case name, so the output does not depend on scheduling.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the repository root, for tests.support.node_breadth
    sys.path.insert(0, str(ROOT))

from deeploy_core.plugins import PluginHost  # noqa: E402
from tests.support.node_breadth import GROUPS, Outcome, case_named, iter_cases, run_case  # noqa: E402

_HOST: PluginHost | None = None
_CACHE: Path | None = None
_TIMEOUT = 120


def _start_worker(timeout: int, quiet: bool) -> None:
    """One plugin host and one runtime cache per worker process; ``quiet``: the worker's stderr is discarded
    (onnx-graphsurgeon and ONNX Runtime print a warning per refused fold, which would bury the summary)."""
    global _HOST, _CACHE, _TIMEOUT
    if quiet:  # onnx-graphsurgeon writes its warnings to stdout, ONNX Runtime to stderr
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    _HOST = PluginHost.discover()
    _CACHE = Path(tempfile.mkdtemp(prefix="deeploy-node-tests-runtime-"))
    _TIMEOUT = timeout


def _on_alarm(signum: int, frame: object) -> None:
    raise TimeoutError(f"the case took longer than {_TIMEOUT} s")


def _run(job: tuple[str, str]) -> dict[str, str]:
    name, platform = job
    assert _HOST is not None and _CACHE is not None, "the worker was started"
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(_TIMEOUT)
    try:
        outcome = run_case(case_named(name), platform, _HOST, _CACHE)
    except TimeoutError as error:
        outcome = Outcome(name, "build or run failure", "", str(error))
    finally:
        signal.alarm(0)
    return {**outcome.as_json(), "platform": platform}


def summary(platform: str, outcomes: list[dict[str, str]], top: int = 12) -> str:
    """``platform: passed P / T (x %)`` and one line per failure group with its most frequent ops."""
    total = len(outcomes)
    passed = [o for o in outcomes if o["group"] == "passed"]
    by_variant = Counter(o["variant"] for o in passed)
    lines = [f"{platform}: passed {len(passed)} / {total} ({100.0 * len(passed) / max(total, 1):.1f} %)"
             f"  [as written {by_variant.get('as written', 0)}, with constant parameters {by_variant.get('constants', 0)}]"]
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for outcome in outcomes:
        groups[outcome["group"]].append(outcome)
    for group in GROUPS[1:]:
        members = groups.get(group, [])
        if not members:
            continue
        ops = Counter(o["op"] or _case_op(o["case"]) for o in members)
        listed = ", ".join(f"{op} {count}" for op, count in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))[:top])
        more = f", … {len(ops) - top} more ops" if len(ops) > top else ""
        lines.append(f"  {group:26} {len(members):5}  {listed}{more}")
    return "\n".join(lines)


def _case_op(name: str) -> str:
    """The op a case tests, from its model's first node (failures that name no node)."""
    return case_named(name).model.graph.node[0].op_type


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platforms", default="generic-c,pulp-cluster")
    parser.add_argument("--filter", default=None, help="regular expression on case names (test_relu, ...)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=120, help="seconds per case and platform")
    parser.add_argument("--json", type=Path, default=None, help="write every outcome to this file")
    parser.add_argument("--show-stderr", action="store_true", help="keep the workers' warnings on stderr")
    args = parser.parse_args(argv)
    platforms = [p.strip() for p in args.platforms.split(",") if p.strip()]
    names = [case.name for case in iter_cases(args.filter)]
    if not names:
        print(f"error: no default-domain node test case matches {args.filter!r}", file=sys.stderr)
        return 2
    jobs = [(name, platform) for platform in platforms for name in names]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), initializer=_start_worker,
                             initargs=(args.timeout, not args.show_stderr)) as pool:
        results = list(pool.map(_run, jobs, chunksize=4))
    results.sort(key=lambda r: (platforms.index(r["platform"]), r["case"]))
    print(f"ONNX {__import__('onnx').__version__} backend node tests, default domain: {len(names)} cases")
    for platform in platforms:
        print(summary(platform, [r for r in results if r["platform"] == platform]))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
