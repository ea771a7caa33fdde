"""Tile Deeploy's peer networks into L1 and print what the tiler did, per network and L1 size.

Columns: whole compile time and the tiler's part split into CP model build, CP-SAT solve and memory-map
allocation; number of tiles over all layers; bytes moved L2 → L1 and L1 → L2 per inference (report.json's
``traffic``); L1 used (tile buffers + tables + scratch) against the configured size.  ``smallest`` is the size the diagnosis of a
too-small L1 names.

    python bench/tiling.py [--filter Models/] [--l1 64000,16000,smallest] [--buffering single]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.tiling.wrapper import TilingInfeasibleError


def smallest(peer, buffering: str, host: PluginHost) -> int:
    try:
        compile_model(peer.model, CompileOptions(platform="generic-c", input_types=peer.input_types(),
                                                 level_sizes={"L1": 1}, buffering=buffering), host)
    except TilingInfeasibleError as error:
        found = re.search(r"needs at least (\d+) bytes", str(error))
        if found:
            return int(found.group(1))
    raise SystemExit(f"{peer.name}: no minimum size reported")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filter", default="Models/", help="substring of the test path (default: Models/)")
    parser.add_argument("--l1", default="64000,16000,smallest")
    parser.add_argument("--buffering", default="single", choices=["single", "double"])
    args = parser.parse_args()
    root = peer_tests_root(Path(__file__).resolve().parent)
    if root is None:
        print("peer tests not found (../shared/peer-tests/deeploy)", file=sys.stderr)
        return 2
    host = PluginHost.discover(PluginSelection.from_options(os.environ))
    header = (f"{'network':44} {'L1':>7} {'compile s':>9} {'build s':>8} {'solve s':>8} {'alloc s':>8} "
              f"{'tiles':>6} {'L2→L1 B':>10} {'L1→L2 B':>10} {'L1 used':>8}")
    print(header)
    print("-" * len(header))
    for peer in find_peer_tests(root, args.filter):
        for size_text in args.l1.split(","):
            size = smallest(peer, args.buffering, host) if size_text == "smallest" else int(size_text)
            options = CompileOptions(platform="generic-c", input_types=peer.input_types(), level_sizes={"L1": size},
                                     buffering=args.buffering)
            start = time.perf_counter()
            try:
                _, generated = compile_model(peer.model, options, host)
            except TilingInfeasibleError as error:
                print(f"{peer.name:44} {size:>7} infeasible: {error}")
                continue
            elapsed = time.perf_counter() - start
            tiling = generated.report["tiling"]
            times = generated.timings["tiling"]
            tiles = sum(layer["tiles"] for layer in tiling["layers"])
            traffic = generated.report["traffic"]
            moved_in, moved_out = traffic["L2->L1"], traffic["L1->L2"]
            used = generated.report["memory_levels"]["L1"]["used"]
            print(f"{peer.name:44} {size:>7} {elapsed:>9.2f} {times['model_build']:>8.3f} {times['solve']:>8.3f} "
                  f"{times['allocation']:>8.3f} {tiles:>6} {moved_in:>10} {moved_out:>10} {used:>8}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
