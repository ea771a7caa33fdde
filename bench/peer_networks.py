"""Compile, build and time Deeploy's peer networks on a platform; print one row per network.

Columns: compile wall time of the whole ``deeploy-core compile`` process,
generated code size (C and headers, weights included), arena bytes against the
lower bound (largest total size alive at once), and the best RunNetwork time
over N runs of the built binary.

    python bench/peer_networks.py [--platform generic-c] [--filter /FP32/] [--repeats 20]
    python bench/peer_networks.py --integer --filter /    # integer peer tests, inputs typed by Deeploy's rule
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


from deeploy_core.api import CompileOptions, compile_model, reference_inputs
from deeploy_core.cli.model_options import data_input_types
from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.validate import Toolchain, build_executable, compare_outputs, run_network
from deeploy_core.validate.data import load_npz_by_position


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--platform", default="generic-c")
    parser.add_argument("--filter", default="/FP32/", help="substring of the test path (default: /FP32/)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--integer", action="store_true",
                        help="type inputs with Deeploy's rule (--input-types-from inputs.npz) and compare exactly")
    args = parser.parse_args()
    root = peer_tests_root(Path(__file__).resolve().parent)
    if root is None:
        print("peer tests not found (../shared/peer-tests/deeploy)", file=sys.stderr)
        return 2
    host = PluginHost.discover(PluginSelection.from_options(os.environ))
    toolchain = Toolchain.from_environment()
    header = f"{'network':58} {'compile s':>9} {'code B':>9} {'arena B':>9} {'bound B':>9} {'ratio':>6} {'run µs':>10} {'ok':>3}"
    print(header)
    print("-" * len(header))
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        cache = Path(scratch) / "cache"
        cache.mkdir()
        for index, peer in enumerate(find_peer_tests(root, args.filter)):
            if args.integer and "/FP32/" in f"/{peer.name}/":
                continue
            out = Path(scratch) / f"out{index}"
            start = time.perf_counter()
            typing = ["--input-types-from", str(peer.inputs)] if args.integer else []
            process = subprocess.run(
                [sys.executable, "-m", "deeploy_core", "compile", str(peer.model), "--platform", args.platform,
                 *typing, "-o", str(out)],
                capture_output=True, text=True, env={**os.environ, "DEEPLOY_CORE_PLUGINS": os.environ.get("DEEPLOY_CORE_PLUGINS", args.platform)},
            )
            compile_seconds = time.perf_counter() - start
            if process.returncode != 0:
                print(f"{peer.name:58} compile failed: {process.stderr.strip().splitlines()[0]}")
                failures += 1
                continue
            code_bytes = sum(path.stat().st_size for path in out.iterdir() if path.suffix in (".c", ".h"))
            memory = json.loads((out / "report.json").read_text())["memory"]
            types = data_input_types(peer.model, peer.inputs) if args.integer else {}
            _, generated = compile_model(peer.model, CompileOptions(platform=args.platform, input_types=types), host)
            executable = build_executable(generated, Path(scratch) / f"build{index}", toolchain, cache)
            inputs = reference_inputs(peer.model, peer.inputs)
            actual, best_ns = run_network(executable, generated, inputs, args.repeats)
            expected = load_npz_by_position(peer.outputs, len(actual))
            ok = all(c.ok for c in compare_outputs(generated, actual, expected, 0.0 if args.integer else 1e-4, 0.0))
            failures += not ok
            ratio = memory["arena_bytes"] / max(memory["lower_bound_bytes"], 1)
            print(
                f"{peer.name:58} {compile_seconds:9.2f} {code_bytes:9d} {memory['arena_bytes']:9d} "
                f"{memory['lower_bound_bytes']:9d} {ratio:6.3f} {best_ns / 1e3:10.1f} {'yes' if ok else 'NO':>3}"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
