"""Digests of every file a compile writes, computed in a fresh process, to prove that output is reproducible.

Nondeterminism in a compiler hides in what a single process cannot see: the
order of a ``set`` of strings changes with ``PYTHONHASHSEED``, a solver's
answer with its wall-clock limit, a name counter with what was compiled
before.  So the check runs this module as a child process per configuration
and hash seed (``python -m deeploy_core.testing.determinism``), each child
compiling every requested peer network in turn, and compares what the
children print.  The second child of a pair compiles the peers in reverse
order (``--reverse``) so that state leaking from one compile into the next
shows up as a difference too.

Each child prints one JSON line per network: the SHA-256 of every generated
file and of ``report.json`` by file name, as :meth:`GeneratedNetwork.write`
writes them.  A compile that fails is part of the output as well: its error
message is digested as the pseudo-file ``(error)``.  ``--dump DIR`` also keeps
the files, so a difference can be diffed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.errors import DeeployError
from deeploy_core.plugins import PluginHost, PluginSelection, PluginStatus
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root
from deeploy_core.tiling.errors import TilingInfeasibleError

PLUGINS = ("generic-c", "pulp-cluster", "minimalloc", "tetris")
"""The plugins a child loads (``DEEPLOY_CORE_PLUGINS``): both platforms and every allocator plugin."""

ALLOCATORS = ("first-fit", "minimalloc", "tetris-coopt", "tetris-random")
ERROR_FILE = "(error)"
L2_STEP = 65536
"""A cluster network that does not fit the default L2 is compiled with the L2 its diagnosis names, rounded up."""


@dataclass(frozen=True)
class Setup:
    """A platform with its tiling options (everything but the allocator)."""

    name: str
    platform: str
    level_sizes: tuple[tuple[str, int], ...] = ()
    buffering: str | None = None
    """None for the untiled setup: any buffering selects a tiler and so turns tiling on."""


SETUPS = (
    Setup("generic-c-untiled", "generic-c"),
    Setup("generic-c-l1-16000-single", "generic-c", (("L1", 16000),), "single"),
    Setup("generic-c-l1-16000-double", "generic-c", (("L1", 16000),), "double"),
    Setup("pulp-cluster-l1-16384-single", "pulp-cluster", (("L1", 16384),), "single"),
    Setup("pulp-cluster-l1-16384-double", "pulp-cluster", (("L1", 16384),), "double"),
)


@dataclass(frozen=True)
class Configuration:
    """One point of the matrix: a setup and the allocator that lays out its memory."""

    setup: Setup
    allocator: str

    @property
    def name(self) -> str:
        return f"{self.setup.name}/{self.allocator}"


CONFIGURATIONS = tuple(Configuration(setup, allocator) for setup in SETUPS for allocator in ALLOCATORS)
BY_NAME = {configuration.name: configuration for configuration in CONFIGURATIONS}


@dataclass
class NetworkDigest:
    """What one child printed for one network: SHA-256 per file name, and the L2 it needed (cluster only)."""

    peer: str
    files: dict[str, str]
    l2: int | None = None
    error: str | None = None

    def to_json(self) -> str:
        return json.dumps({"peer": self.peer, "files": self.files, "l2": self.l2, "error": self.error},
                          sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> NetworkDigest:
        data = json.loads(line)
        return cls(data["peer"], data["files"], data.get("l2"), data.get("error"))


@dataclass
class Comparison:
    """Per network, the first file whose digest differs between two children (empty: all identical)."""

    identical: list[str] = field(default_factory=list)
    different: dict[str, str] = field(default_factory=dict)


def file_digests(directory: Path) -> dict[str, str]:
    """SHA-256 of every file under ``directory`` by relative path, sorted by path."""
    return {path.relative_to(directory).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(directory.rglob("*")) if path.is_file()}


def compile_digest(peer: PeerTest, configuration: Configuration, host: PluginHost, dump: Path | None = None
                   ) -> NetworkDigest:
    """Compile ``peer`` in this process and digest what it writes (or the error it raises)."""
    setup = configuration.setup
    sizes = dict(setup.level_sizes)
    l2: int | None = None
    while True:
        options = CompileOptions(platform=setup.platform, input_types=peer.input_types(),
                                 level_sizes={**sizes, **({"L2": l2} if l2 else {})}, buffering=setup.buffering,
                                 allocator=configuration.allocator)
        try:
            _, generated = compile_model(peer.model, options, host)
            break
        except TilingInfeasibleError as error:
            if setup.platform != "pulp-cluster" or l2 is not None or error.level != "L2" or error.needed_bytes is None:
                return _error_digest(peer, str(error), l2)
            l2 = -(-error.needed_bytes // L2_STEP) * L2_STEP
        except DeeployError as error:
            return _error_digest(peer, str(error), l2)
    with tempfile.TemporaryDirectory(prefix="deeploy-determinism-") as scratch:
        directory = dump / peer.name if dump is not None else Path(scratch)
        generated.write(directory)
        return NetworkDigest(peer.name, file_digests(directory), l2)


def _error_digest(peer: PeerTest, message: str, l2: int | None) -> NetworkDigest:
    return NetworkDigest(peer.name, {ERROR_FILE: hashlib.sha256(message.encode()).hexdigest()}, l2, message)


def compare(first: Sequence[NetworkDigest], second: Sequence[NetworkDigest]) -> Comparison:
    """Match the two children's lines by network; name the first differing file of each network that differs."""
    result = Comparison()
    theirs = {digest.peer: digest for digest in second}
    for mine in sorted(first, key=lambda digest: digest.peer):
        other = theirs.get(mine.peer)
        if other is None:
            result.different[mine.peer] = "(missing from the second run)"
            continue
        names = sorted(set(mine.files) | set(other.files))
        differing = [name for name in names if mine.files.get(name) != other.files.get(name)]
        if differing:
            result.different[mine.peer] = differing[0]
        else:
            result.identical.append(mine.peer)
    for peer in sorted(set(theirs) - {digest.peer for digest in first}):
        result.different[peer] = "(missing from the first run)"
    return result


def child_command(configuration: Configuration, root: Path, peers: Sequence[str], reverse: bool = False,
                  dump: Path | None = None) -> list[str]:
    """The command line of a child that compiles ``peers`` (names relative to the peer-tests ``root``)."""
    command = [sys.executable, "-m", "deeploy_core.testing.determinism", "--configuration", configuration.name,
               "--root", str(root)]
    if reverse:
        command.append("--reverse")
    if dump is not None:
        command += ["--dump", str(dump)]
    return command + list(peers)


def child_environment(environ: Mapping[str, str], hash_seed: int) -> dict[str, str]:
    """``environ`` with the hash seed and the plugin allow-list a child needs."""
    return {**environ, "PYTHONHASHSEED": str(hash_seed), "DEEPLOY_CORE_PLUGINS": ",".join(PLUGINS)}


class ChildFailed(RuntimeError):
    """A child process exited with an error (not a compile error: those are part of its output)."""


def run_child(configuration: Configuration, root: Path, peers: Sequence[str], hash_seed: int, reverse: bool = False,
              dump: Path | None = None) -> list[NetworkDigest]:
    """Run one child with ``PYTHONHASHSEED=hash_seed`` and parse what it prints."""
    done = subprocess.run(child_command(configuration, root, peers, reverse, dump), capture_output=True, text=True,
                          env=child_environment(os.environ, hash_seed))
    if done.returncode != 0:
        raise ChildFailed(f"{configuration.name} (PYTHONHASHSEED={hash_seed}) exited with {done.returncode}:\n"
                          f"{done.stderr.strip()[-2000:]}")
    return [NetworkDigest.from_json(line) for line in done.stdout.splitlines() if line.strip()]


def check_configuration(configuration: Configuration, root: Path, peers: Sequence[str],
                        hash_seeds: tuple[int, int] = (1, 2), dump: Path | None = None
                        ) -> tuple[Comparison, list[NetworkDigest]]:
    """Compile ``peers`` of ``root`` in two children at once (the second with the other hash seed, in reverse
    order) and compare them; returns the comparison and the first child's digests.  ``dump``: keep both
    children's files in ``dump/<hash seed>/``."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = [pool.submit(run_child, configuration, root, peers, seed, index == 1,
                            dump / str(seed) if dump is not None else None)
                for index, seed in enumerate(hash_seeds)]
        first, second = (run.result() for run in runs)
    return compare(first, second), first


def describe_differences(configuration: Configuration, comparison: Comparison, hash_seeds: tuple[int, int] = (1, 2)
                         ) -> str:
    """One line per network whose output differs, naming its first differing file."""
    return "\n".join(f"{configuration.name}: {peer}: {name} differs between PYTHONHASHSEED={hash_seeds[0]} and "
                     f"PYTHONHASHSEED={hash_seeds[1]} (reverse order)"
                     for peer, name in sorted(comparison.different.items()))


def missing_plugins() -> list[str]:
    """The plugins of :data:`PLUGINS` that are not installed (or do not load) in this environment."""
    host = PluginHost.discover(PluginSelection(allow_list=frozenset(PLUGINS)))
    loaded = {record.name for record in host.plugins() if record.status is PluginStatus.OK}
    return [name for name in PLUGINS if name not in loaded]


def _selected(root: Path, names: Sequence[str]) -> Iterator[PeerTest]:
    by_name = {peer.name: peer for peer in find_peer_tests(root)}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise SystemExit(f"unknown peer networks: {', '.join(unknown)}")
    yield from (by_name[name] for name in (names or sorted(by_name)))


def main(argv: Sequence[str] | None = None) -> int:
    """Compile peer networks for one configuration; print one :class:`NetworkDigest` JSON line per network."""
    parser = argparse.ArgumentParser(prog="python -m deeploy_core.testing.determinism", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configuration", required=True, choices=sorted(BY_NAME))
    parser.add_argument("--root", type=Path, help="the peer tests (default: found as peer_tests_root() finds them)")
    parser.add_argument("--reverse", action="store_true", help="compile the networks in reverse order")
    parser.add_argument("--dump", type=Path, help="also write each network's files into DUMP/<network>/")
    parser.add_argument("peers", nargs="*", help="peer networks (relative paths); default: all of them")
    args = parser.parse_args(argv)
    root = args.root or peer_tests_root()
    if root is None or not root.is_dir():
        raise SystemExit("Deeploy peer tests not found (set DEEPLOY_CORE_PEER_TESTS)")
    host = PluginHost.discover(PluginSelection(allow_list=frozenset(PLUGINS)))
    peers = list(_selected(root, args.peers))
    for peer in reversed(peers) if args.reverse else peers:
        print(compile_digest(peer, BY_NAME[args.configuration], host, args.dump).to_json(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
