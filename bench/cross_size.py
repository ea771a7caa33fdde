"""Flash and RAM of each peer network's library on bare-metal cores: one row per network.

Compiles every Deeploy peer network for generic-c (integer inputs typed by
Deeploy's rule, as the peer tests do), writes the output folder, builds
``libnetwork.a`` the way firmware would (``make CC=arm-none-eabi-gcc
CFLAGS="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os
-Wall -Wextra -Werror"``, and the rv32imc equivalent when Debian's RISC-V
compiler and picolibc are installed) and prints its sections in bytes,
split into the generated network (``Network*.c``) and the runtime kernels the
library holds: ``text`` is code, ``rodata`` the weights and constants (flash),
``data`` initialised RAM, ``bss`` the arena and other zeroed RAM (all of it
the network's; the kernels keep no state).  Sizes are of the unlinked
library: a linker with ``--gc-sections`` can only make them smaller.

    python bench/cross_size.py [--filter TEXT] [--target cortex-m4] [--rst]

``--rst`` prints the table as reStructuredText (what docs/generated-code.rst
shows).  Exit code 1 when a network fails to compile or build.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.errors import DeeployError
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.cross_targets import TARGETS, CrossBuildError, CrossTarget, build_library
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root
from deeploy_core.testing.section_sizes import SectionSizes, measure_members

COLUMNS = ("net text", "net rodata", "kernels text", "kernels rodata", "data", "bss")


def split_library(members: dict[str, SectionSizes], generated_stems: set[str]) -> tuple[SectionSizes, SectionSizes]:
    """(network, kernels): members compiled from the generated sources, and all the others."""
    network = kernels = SectionSizes()
    for name, sizes in members.items():
        if Path(name).stem in generated_stems:
            network += sizes
        else:
            kernels += sizes
    return network, kernels


def cells(network: SectionSizes, kernels: SectionSizes) -> list[str]:
    """One target's columns, in the order of :data:`COLUMNS`."""
    values = (network.text, network.rodata, kernels.text, kernels.rodata, network.data + kernels.data,
              network.bss + kernels.bss)
    return [str(value) for value in values]


def make_host() -> PluginHost:
    """generic-c only, whatever else is installed."""
    from deeploy_generic_c import plugin as generic_c_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return host


def row_of(peer: PeerTest, targets: list[CrossTarget], host: PluginHost, scratch: Path) -> list[str]:
    """Compile ``peer`` once and build its library for every target; its table row."""
    _, generated = compile_model(peer.model, CompileOptions(platform="generic-c", input_types=peer.input_types()), host)
    folder = scratch / "out"
    generated.write(folder)
    stems = {Path(name).stem for name in generated.files if name.endswith(".c") and "/" not in name}
    row = [peer.name]
    for target in targets:
        library = build_library(folder, target, build_dir=f"build-{target.name}")
        row += cells(*split_library(measure_members(target.size_tool, library), stems))
    return row


def format_rows(header: list[str], rows: list[list[str]], rst: bool) -> list[str]:
    """Plain columns, or an RST simple table (same cells) for the docs."""
    widths = [max(len(row[index]) for row in [header, *rows]) for index in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(width) if index == 0 else cell.rjust(width)
                         for index, (cell, width) in enumerate(zip(cells, widths))).rstrip()

    rule = "  ".join("=" * width for width in widths)
    if rst:
        return [rule, line(header), rule, *(line(row) for row in rows), rule]
    return [line(header), "-" * len(rule), *(line(row) for row in rows)]


def size_arguments(description: str, scope: str, choices: Sequence[CrossTarget], default_targets: str
                   ) -> argparse.Namespace:
    """The options both size benchmarks take: ``--filter``, ``--target`` (one of ``choices``; repeatable), ``--rst``."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filter", default="", help=f"substring of the {scope}'s path (default: all)")
    parser.add_argument("--target", action="append", choices=[target.name for target in choices],
                        help=f"only this target (repeatable; default: {default_targets})")
    parser.add_argument("--rst", action="store_true", help="print a reStructuredText table")
    return parser.parse_args()


def installed_targets(candidates: Sequence[CrossTarget], requested: list[str] | None) -> list[CrossTarget]:
    """The requested (default: all) candidates whose compiler is installed; a note on stderr for each left out."""
    wanted = [target for target in candidates if not requested or target.name in requested]
    targets = [target for target in wanted if target.missing() is None]
    for target in wanted:
        if target not in targets:
            print(f"note: {target.name} left out: {target.missing()}", file=sys.stderr)
    return targets


def peer_root_or_message() -> Path | None:
    """The peer tests' folder, or None after saying on stderr where it should be."""
    root = peer_tests_root(Path(__file__).resolve().parent)
    if root is None:
        print("error: peer tests not found: put Deeploy's peer tests in ../shared/peer-tests/deeploy "
              "or set DEEPLOY_CORE_PEER_TESTS", file=sys.stderr)
    return root


def main() -> int:
    args = size_arguments(__doc__ or "", "peer test", TARGETS, "every target whose compiler is installed")
    root = peer_root_or_message()
    if root is None:
        return 2
    targets = installed_targets(TARGETS, args.target)
    if not targets:
        print("error: no cross compiler found: install Debian's gcc-arm-none-eabi and libnewlib-arm-none-eabi",
              file=sys.stderr)
        return 2
    host = make_host()
    header = ["network", *(column for _ in targets for column in COLUMNS)]
    rows: list[list[str]] = []
    failures: list[str] = []
    for peer in find_peer_tests(root, args.filter):
        with tempfile.TemporaryDirectory() as scratch:
            try:
                rows.append(row_of(peer, targets, host, Path(scratch)))
            except (DeeployError, CrossBuildError) as error:
                failures.append(f"{peer.name}: {str(error).splitlines()[0]}")
    if len(targets) > 1:
        print("columns per target: " + ", ".join(target.name for target in targets))
    print("\n".join(format_rows(header, rows, args.rst)))
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
