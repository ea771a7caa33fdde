"""Is every compile reproducible?  The full matrix: every peer network × platform/tiler setup × allocator.

Per configuration, two child processes compile every peer network, one with ``PYTHONHASHSEED=1``, the other with
``PYTHONHASHSEED=2`` and in reverse order, and the SHA-256 of every generated file and of report.json are compared
(see deeploy_core/testing/determinism.py).  One row per configuration: networks whose output is identical, networks
that differ, compiles that failed (identically in both runs: a failure is output too), and the wall time of the pair.
After the table, every difference with its first differing file.  The exit code is 1 when anything differs.

tests/test_determinism.py runs a subset of this matrix in CI (every network with the default allocator on each
setup, every allocator on a few networks); this script is the whole of it.

    python bench/determinism.py [--filter Models/] [--configuration pulp-cluster] [--dump DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from deeploy_core.testing.determinism import (
    CONFIGURATIONS,
    check_configuration,
    describe_differences,
    missing_plugins,
)
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filter", default="", help="only peer networks whose path contains this")
    parser.add_argument("--configuration", default="", help="only configurations whose name contains this")
    parser.add_argument("--dump", type=Path, help="keep every child's files in DUMP/<configuration>/<hash seed>/")
    args = parser.parse_args()
    root = peer_tests_root(Path(__file__).parent)
    if root is None:
        print("Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing", file=sys.stderr)
        return 2
    missing = missing_plugins()
    if missing:
        print(f"plugins not installed: {', '.join(missing)}", file=sys.stderr)
        return 2
    peers = [peer.name for peer in find_peer_tests(root, args.filter)]
    chosen = [configuration for configuration in CONFIGURATIONS if args.configuration in configuration.name]
    print(f"{len(peers)} networks, {len(chosen)} configurations, PYTHONHASHSEED 1 vs 2 (reverse order)")
    print(f"{'configuration':<45} {'identical':>9} {'different':>9} {'errors':>6} {'seconds':>8}")
    differences, started = [], time.perf_counter()
    for configuration in chosen:
        start = time.perf_counter()
        dump = args.dump / configuration.name if args.dump else None
        comparison, digests = check_configuration(configuration, root, peers, dump=dump)
        errors = sum(digest.error is not None for digest in digests)
        print(f"{configuration.name:<45} {len(comparison.identical):>9} {len(comparison.different):>9} "
              f"{errors:>6} {time.perf_counter() - start:>8.1f}", flush=True)
        if comparison.different:
            differences.append(describe_differences(configuration, comparison))
    print(f"total {time.perf_counter() - started:.1f} s")
    for text in differences:
        print(text)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
