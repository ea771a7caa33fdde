"""Deeploy's peer networks on the PULP-like cluster: what each compile costs, uses, moves and is estimated to take.

One row per network, L1 size and buffering: compile time; L1 used (tile buffers + tables + per-core scratch)
and L2 used (arena + tables + constants); bytes and DMA transfers L2 → L1 and L1 → L2 per inference; mean busy
cores; estimated cycles from the cost model (docs/pulp-cluster.rst).  After each L1 size, the double-buffering
speed-up over single buffering.  ``--run`` also builds every compile against the host emulator, runs it on the
peer inputs, compares with the golden outputs and checks the emulator's DMA counters against the estimate.

    python bench/pulp.py [--filter Models/] [--l1 65536,16384] [--cores 8] [--run]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.tiling.errors import TilingInfeasibleError

DEFAULT_L2 = 512 * 1024


def options(peer, l1: int, buffering: str, cores: int, l2: int | None) -> CompileOptions:
    sizes = {"L1": l1, **({"L2": l2} if l2 else {})}
    return CompileOptions(platform="pulp-cluster", input_types=peer.input_types(), level_sizes=sizes,
                          buffering=buffering, cores=cores)


def compile_once(peer, l1: int, buffering: str, cores: int, host: PluginHost) -> tuple[dict, float, int | None]:
    """(report, seconds, L2 used when the default was too small); a too-small L2 is retried at the named size."""
    l2 = None
    for _ in range(2):
        start = time.perf_counter()
        try:
            _, generated = compile_model(peer.model, options(peer, l1, buffering, cores, l2), host)
            return generated.report, time.perf_counter() - start, l2
        except TilingInfeasibleError as error:
            found = re.match(r"L2 needs at least (\d+) bytes", str(error))
            if not found or l2 is not None:
                raise
            l2 = -(-int(found.group(1)) // 65536) * 65536
    raise AssertionError("unreachable")


def measured(peer, l1: int, buffering: str, cores: int, l2: int | None, host: PluginHost, cache: Path) -> tuple[bool, dict]:
    """Build and run on the emulator; (outputs match, the emulator's counters)."""
    with tempfile.TemporaryDirectory() as scratch:
        stats = Path(scratch) / "stats.json"
        os.environ["PULP_EMULATOR_STATS"] = str(stats)
        tolerance = 1e-4 if peer.is_float else 0.0
        _, result = validate_model(peer.model, options(peer, l1, buffering, cores, l2), host, inputs_npz=peer.inputs,
                                   outputs_npz=peer.outputs, atol=tolerance, rtol=tolerance, repeats=1, cache_dir=cache)
        del os.environ["PULP_EMULATOR_STATS"]
        return result.ok, json.loads(stats.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filter", default="Models/", help="substring of the test path (default: Models/)")
    parser.add_argument("--l1", default="65536,16384")
    parser.add_argument("--cores", type=int, default=8)
    parser.add_argument("--run", action="store_true", help="also build, run and check on the emulator")
    args = parser.parse_args()
    root = peer_tests_root(Path(__file__).resolve().parent)
    if root is None:
        print("peer tests not found (../shared/peer-tests/deeploy)", file=sys.stderr)
        return 2
    host = PluginHost.discover(PluginSelection.from_options(os.environ))
    cache = Path(tempfile.mkdtemp(prefix="pulp-bench-runtime-"))
    header = (f"{'network':40} {'L1':>6} {'buf':>6} {'compile s':>9} {'L1 used':>8} {'L2 used':>8} {'L2→L1 B':>9} "
              f"{'L1→L2 B':>9} {'DMAs':>6} {'cores':>5} {'est. cycles':>11}" + (f" {'run':>10}" if args.run else ""))
    print(header)
    print("-" * len(header))
    failures = 0
    for peer in find_peer_tests(root, args.filter):
        for l1 in (int(text) for text in args.l1.split(",")):
            cycles = {}
            for buffering in ("single", "double"):
                report, seconds, l2 = compile_once(peer, l1, buffering, args.cores, host)
                estimate, levels = report["estimate"], report["memory_levels"]
                layers = report["tiling"]["layers"]
                busy = sum(layer["cluster"]["mean_busy"] for layer in layers) / max(len(layers), 1)
                cycles[buffering] = estimate["cycles"]
                line = (f"{peer.name[-40:]:40} {l1:>6} {buffering:>6} {seconds:>9.2f} {levels['L1']['used']:>8} "
                        f"{levels['L2']['used']:>8} {estimate['dma_bytes']['L2->L1']:>9} "
                        f"{estimate['dma_bytes']['L1->L2']:>9} {sum(estimate['dma_transfers'].values()):>6} "
                        f"{busy:>5.1f} {estimate['cycles']:>11}")
                if args.run:
                    ok, stats = measured(peer, l1, buffering, args.cores, l2, host, cache)
                    agrees = stats["dma_bytes"] == {k: v for k, v in estimate["dma_bytes"].items() if v} \
                        and stats["macs"] == estimate["macs_per_core"]
                    failures += not (ok and agrees)
                    line += f" {('ok' if ok else 'MISMATCH') + ('' if agrees else ' COUNTERS'):>10}"
                if l2:
                    line += f"  (L2 {l2} B: the default {DEFAULT_L2} B is too small)"
                print(line, flush=True)
            print(f"{'':40} {l1:>6} double buffering: {cycles['single'] / cycles['double']:.2f}x fewer estimated cycles")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
