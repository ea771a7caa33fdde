"""Is the generated code unchanged?  SHA-256 of every file the compiler writes, per configuration and peer network.

A refactor of the compiler's internals must not change what it generates.  This script compiles every Deeploy peer
network in a fixed set of configurations (both platforms, untiled and tiled, single and double buffering, an exact
allocator) and records the SHA-256 of each generated file and of report.json.  Run it with ``--write`` before the
refactor and with ``--compare`` after it: any difference is listed, and the exit code is 1.

report.json may legitimately gain keys from a change that adds information to the report (the per-layer chain of
code transformations, say).  Those keys are listed in ``IGNORED_REPORT_KEYS`` and removed from the report before it is
digested, on both sides; every other byte of every file counts.  A compile that fails is output too: its error
message is digested as the pseudo-file ``(error)`` (see deeploy_core/testing/determinism.py, whose compile step,
including the cluster's retry with the L2 size a TilingInfeasibleError names, is reused here).

    python bench/output_digests.py --write /tmp/digests-before.json
    python bench/output_digests.py --compare /tmp/digests-before.json [--filter Models/] [--configuration pulp]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.testing.determinism import PLUGINS, Configuration, NetworkDigest, Setup, compile_digest
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root

FORMAT_VERSION = 1

UNTILED = Setup("generic-c-untiled", "generic-c", (), None)  # type: ignore[arg-type]
"""No level size and no buffering: the plain arena flow (determinism.py's "untiled" setup names a buffering, which
turns tiling on with the default L1)."""

CONFIGURATIONS: tuple[Configuration, ...] = (
    Configuration(UNTILED, "first-fit"),
    Configuration(Setup("generic-c-l1-16000-single", "generic-c", (("L1", 16000),), "single"), "first-fit"),
    Configuration(Setup("generic-c-l1-16000-double", "generic-c", (("L1", 16000),), "double"), "first-fit"),
    Configuration(Setup("pulp-cluster-l1-65536-single", "pulp-cluster", (("L1", 65536),), "single"), "first-fit"),
    Configuration(Setup("pulp-cluster-l1-16384-double", "pulp-cluster", (("L1", 16384),), "double"), "first-fit"),
    Configuration(Setup("generic-c-l1-16000-double", "generic-c", (("L1", 16000),), "double"), "minimalloc"),
)
"""Every configuration whose output is digested (names are ``<setup>/<allocator>``)."""

IGNORED_REPORT_KEYS: tuple[str, ...] = (
    "layers[].code_transformations",
    "options",
    "provenance",
)
"""report.json keys that a change may add without changing the compiler's output: removed before digesting.

``layers[].code_transformations``: the names of the code transformations that ran on each layer, in order
(issue 18 item 4, recorded from then on).  ``options``: the option values each selected extension was made with
(issue 18 item 3).  ``provenance``: the tool's, plugins' and model's identity (issue 20 item 5; it holds versions,
which a release changes without changing the code).  A path is dot-separated keys; ``[]`` applies the rest to every
item of a list.  A key rename (``deeploy_core.report.migration``) changes every report digest: digests written
before one do not compare with those after it."""

REPORT = "report.json"


def strip_keys(value: Any, path: str) -> None:
    """Remove the key ``path`` (see :data:`IGNORED_REPORT_KEYS`) from ``value`` in place, wherever it occurs."""
    head, _, rest = path.partition(".")
    over_items = head.endswith("[]")
    key = head[:-2] if over_items else head
    if not isinstance(value, dict) or key not in value:
        return
    if not rest and not over_items:
        del value[key]
        return
    children = value[key] if over_items and isinstance(value[key], list) else [value[key]]
    for child in children:
        strip_keys(child, rest)


def report_digest(text: str) -> str:
    """SHA-256 of report.json without the ignored keys, serialised as GeneratedNetwork.write serialises it."""
    report = json.loads(text)
    for path in IGNORED_REPORT_KEYS:
        strip_keys(report, path)
    return hashlib.sha256((json.dumps(report, indent=2, sort_keys=True) + "\n").encode("utf-8")).hexdigest()


def digest_peer(peer: PeerTest, configuration: Configuration, host: PluginHost) -> dict[str, Any]:
    """Compile ``peer`` and digest every file it writes (report.json without the ignored keys)."""
    with tempfile.TemporaryDirectory(prefix="deeploy-output-digests-") as scratch:
        digest: NetworkDigest = compile_digest(peer, configuration, host, Path(scratch))
        report = Path(scratch) / peer.name / REPORT
        if report.is_file():
            digest.files[REPORT] = report_digest(report.read_text(encoding="utf-8"))
    return {"files": digest.files, "l2": digest.l2, "error": digest.error}


def compute(root: Path, peer_filter: str, configuration_filter: str) -> dict[str, dict[str, Any]]:
    """Digests by configuration name, then peer name, for the selected configurations and peers."""
    host = PluginHost.discover(PluginSelection(allow_list=frozenset(PLUGINS)))
    peers = find_peer_tests(root, peer_filter)
    chosen = [c for c in CONFIGURATIONS if configuration_filter in c.name]
    digests: dict[str, dict[str, Any]] = {}
    for configuration in chosen:
        started = time.perf_counter()
        digests[configuration.name] = {peer.name: digest_peer(peer, configuration, host) for peer in peers}
        errors = sum(entry["error"] is not None for entry in digests[configuration.name].values())
        print(f"{configuration.name:<45} {len(peers):>3} networks {errors:>3} errors "
              f"{time.perf_counter() - started:>7.1f} s", file=sys.stderr, flush=True)
    return digests


def differences(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    """One line per (configuration, peer) whose files differ, naming the files; only pairs present in ``after``."""
    lines = []
    for configuration, peers in sorted(after.items()):
        for peer, entry in sorted(peers.items()):
            old = before.get(configuration, {}).get(peer)
            if old is None:
                lines.append(f"{configuration}: {peer}: not in the stored digests")
                continue
            names = sorted(set(old["files"]) | set(entry["files"]))
            changed = [name for name in names if old["files"].get(name) != entry["files"].get(name)]
            if old.get("l2") != entry.get("l2"):
                changed.append(f"(l2 {old.get('l2')} -> {entry.get('l2')})")
            if changed:
                lines.append(f"{configuration}: {peer}: {', '.join(changed)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", type=Path, metavar="FILE", help="write the digests as JSON into FILE")
    action.add_argument("--compare", type=Path, metavar="FILE", help="compare with the digests stored in FILE")
    parser.add_argument("--filter", default="", help="only peer networks whose path contains this")
    parser.add_argument("--configuration", default="", help="only configurations whose name contains this")
    args = parser.parse_args()
    root = peer_tests_root(Path(__file__).resolve().parent)
    if root is None:
        print("error: Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing "
              "(or set DEEPLOY_CORE_PEER_TESTS)", file=sys.stderr)
        return 2
    stored: dict[str, Any] | None = None
    if args.compare is not None:
        try:
            stored = json.loads(args.compare.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            print(f"error: cannot read the stored digests {args.compare} ({error}); write them with --write",
                  file=sys.stderr)
            return 2
        if not isinstance(stored, dict) or stored.get("version") != FORMAT_VERSION:
            print(f"error: {args.compare} is not a digest file of version {FORMAT_VERSION}; write it again with "
                  f"--write", file=sys.stderr)
            return 2
    digests = compute(root, args.filter, args.configuration)
    if args.write is not None:
        data = {"version": FORMAT_VERSION, "ignored_report_keys": list(IGNORED_REPORT_KEYS), "digests": digests}
        args.write.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {sum(len(peers) for peers in digests.values())} digests of {len(digests)} configurations "
              f"to {args.write}")
        return 0
    assert stored is not None
    found = differences(stored["digests"], digests)
    for configuration, peers in sorted(digests.items()):
        changed = sum(line.startswith(f"{configuration}: ") for line in found)
        print(f"{configuration:<45} {len(peers):>3} compared {len(peers) - changed:>3} identical {changed:>3} different")
    for line in found:
        print(line)
    print(f"{len(found)} differences in {sum(len(peers) for peers in digests.values())} (configuration, network) pairs")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
