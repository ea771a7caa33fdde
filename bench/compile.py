"""Compile time against the import floor: one row per peer network and mode.

For every Deeploy peer network, each mode's ``deeploy-core compile`` (a new
process, as a user runs it) is timed next to the floor command, ``python -c
"import onnx; onnx.load(MODEL)"``, in the same run and alternating with it,
so both see the same machine.  Modes: untiled generic-c, and pulp-cluster
tiled at L1 = 64 000 and 16 000 bytes (with the L2 the compile's one-line
diagnosis asks for when the default 512 KiB is too small).  Integer inputs
are typed from the peer's inputs (``--input-types-from``), as a user would.
Each figure is the median of ``--repeats`` runs.  Issue 21's targets: untiled
within 2x the floor, tiled within 3x.

    python bench/compile.py [--filter TEXT] [--repeats N] [--modes untiled,l1-64000,l1-16000]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root

MODES: dict[str, tuple[str, ...]] = {
    "untiled": ("--platform", "generic-c"),
    "l1-64000": ("--platform", "pulp-cluster", "--l1", "64000"),
    "l1-16000": ("--platform", "pulp-cluster", "--l1", "16000"),
}
TARGETS = {"untiled": 2.0, "l1-64000": 3.0, "l1-16000": 3.0}
L2_NEEDED = re.compile(r"L2 needs at least (\d+) bytes")
L2_GRANULE = 64 * 1024
CLI = [sys.executable, "-m", "deeploy_core"]


def seconds(command: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    return time.perf_counter() - started, done


def compile_command(peer: PeerTest, mode: str, output: Path) -> list[str]:
    return [*CLI, "compile", str(peer.model), "-o", str(output), "--force", "--quiet",
            "--input-types-from", str(peer.inputs), *MODES[mode]]


def measure(peer: PeerTest, mode: str, repeats: int, scratch: Path) -> tuple[float, float, str]:
    """(median compile seconds, median floor seconds, note); the note is the refusal when the compile fails."""
    command = compile_command(peer, mode, scratch / "out")
    _, first = seconds(command)  # warms the file cache; finds the L2 a cluster network needs
    needed = L2_NEEDED.search(first.stderr)
    if first.returncode != 0 and needed:
        command += ["--l2", str(-(-int(needed.group(1)) // L2_GRANULE) * L2_GRANULE)]
        _, first = seconds(command)
    if first.returncode != 0:
        return float("nan"), float("nan"), first.stderr.strip().splitlines()[-1][:100]
    floor_command = [sys.executable, "-c", f"import onnx; onnx.load({str(peer.model)!r})"]
    ours, floor = [], []
    for _ in range(repeats):
        ours.append(seconds(command)[0])
        floor.append(seconds(floor_command)[0])
    note = "" if "--l2" not in command else f"L2 {command[-1]}"
    return statistics.median(ours), statistics.median(floor), note


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="only networks whose path contains this text")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of " + ", ".join(MODES))
    arguments = parser.parse_args()
    root = peer_tests_root(Path(__file__).resolve().parent.parent)
    if root is None:
        print("Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing", file=sys.stderr)
        return 2
    modes = [mode for mode in arguments.modes.split(",") if mode]
    peers = find_peer_tests(root, arguments.filter)
    print(f"{'network':52} {'mode':9} {'ours s':>7} {'floor s':>7} {'ratio':>6}  note")
    ratios: dict[str, list[float]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory(prefix="deeploy-compile-bench-") as scratch:
        for peer in peers:
            for mode in modes:
                ours, floor, note = measure(peer, mode, arguments.repeats, Path(scratch))
                ratio = ours / floor
                if ratio == ratio:
                    ratios[mode].append(ratio)
                flag = "" if ratio != ratio or ratio <= TARGETS[mode] else f" over {TARGETS[mode]:g}x"
                print(f"{peer.name:52} {mode:9} {ours:7.3f} {floor:7.3f} {ratio:6.2f}  {note}{flag}", flush=True)
    print()
    for mode, values in ratios.items():
        if values:
            over = sum(value > TARGETS[mode] for value in values)
            print(f"{mode:9} median ratio {statistics.median(values):.2f}, max {max(values):.2f}, "
                  f"{over}/{len(values)} over the {TARGETS[mode]:g}x target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
