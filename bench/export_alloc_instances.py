"""Export the activation-arena allocation problem of every Deeploy peer network as an instance CSV.

The files (``id,lower,upper,size``, half-open lifetimes in layer steps, sizes rounded up to the
platform's alignment) are exactly what our compiler hands its allocator, so ``bench/alloc.py`` can
measure allocators on real networks next to the published MiniMalloc instances.

    python bench/export_alloc_instances.py OUTDIR [--filter SUBSTRING]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from deeploy_core.allocation import write_instance
from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root


def instance_name(test_name: str) -> str:
    """A file name for a peer test path (``Models/CCT/FP32/CCT_1_16_16_8`` → ``Models_CCT_FP32_CCT_1_16_16_8``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path)
    parser.add_argument("--filter", default="", help="substring of the test path")
    args = parser.parse_args()
    root = peer_tests_root(Path(__file__).resolve().parent)
    if root is None:
        print("peer tests not found (../shared/peer-tests/deeploy)", file=sys.stderr)
        return 2
    args.output.mkdir(parents=True, exist_ok=True)
    host = PluginHost.discover(PluginSelection.from_options(os.environ))
    for peer in find_peer_tests(root, args.filter):
        deployer, _ = compile_model(peer.model, CompileOptions(platform="generic-c", input_types=peer.input_types()),
                                    host)
        plan = deployer.compilation.memory_plan
        assert plan is not None, "compile_model plans the arena"
        problem = plan.allocation_problem()
        path = args.output / f"{instance_name(peer.name)}.csv"
        write_instance(path, problem)
        print(f"{path}  {len(problem.blocks)} buffers, lower bound {problem.lower_bound()} B")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
