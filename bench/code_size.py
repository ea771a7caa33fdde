"""Code and data size of every peer network as a firmware link keeps it: host x86-64 gcc -O2 and Cortex-M4 -Os.

For each network (every folder under the peer tests' ``Models/`` and the three of
``../shared/bench/deeploy-mlperf``; integer inputs typed by Deeploy's rule, as the peer tests do) this compiles
for generic-c, writes the output folder and builds its ``libnetwork.a`` with the folder's own Makefile, as a
user would (``make CC=… CFLAGS=…``; the Makefile always adds ``-ffunction-sections -fdata-sections``):

* ``x86-64``: ``gcc`` with ``CFLAGS="-O2 -Wall -Wextra -Werror"``;
* ``cortex-m4``: ``arm-none-eabi-gcc`` with bench/cross_size.py's flags (``-mcpu=cortex-m4 -mthumb
  -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os -Wall -Wextra -Werror``), when installed.

What is counted: the sections that a ``--gc-sections`` link keeps of the library — a relocatable link
(``gcc -r -nostdlib -Wl,--gc-sections``) of all of ``libnetwork.a`` rooted at the global symbols that the
generated objects define (``InitNetwork``, ``RunNetwork``, the input/output tables), measured with ``size -A``
(see ``bench/linked_size.py``).  ``text`` is all kept code, network plus kernels: everything the
output folder compiles except the self-test and host emulation; ``net`` is the part of it in functions the
generated sources define (RunNetwork with its inlined layers).  ``rodata`` is weights and constants (flash),
``data`` initialised RAM, ``bss`` the arena and other zeroed RAM.  Not counted: C library functions the kernels
call (``expf``, ``memcpy``, ``nearbyintf``), the application, start-up code.  ``deeploy`` is Deeploy 0.2.1's
``.text`` (network + kernels, x86-64 gcc 12 -O2) where issue 21 measured it; ``ratio`` is ours over it.

    python bench/code_size.py [--filter TEXT] [--target x86-64|cortex-m4] [--rst]

Exit code 1 when a network fails to compile or build.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cross_size import format_rows, installed_targets, make_host, peer_root_or_message, size_arguments  # noqa: E402
from linked_size import linked_sizes  # noqa: E402

from deeploy_core.api import CompileOptions, compile_model  # noqa: E402
from deeploy_core.errors import DeeployError  # noqa: E402
from deeploy_core.plugins import PluginHost  # noqa: E402
from deeploy_core.testing.cross_targets import CORTEX_M4, WARNINGS, CrossBuildError, CrossTarget, build_library  # noqa: E402
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests  # noqa: E402

HOST = CrossTarget(name="x86-64", tool_prefix="", cflags=("-O2", *WARNINGS), package="gcc and binutils")
TARGETS = (HOST, CORTEX_M4)
COLUMNS = ("text", "net", "rodata", "data", "bss")
DEEPLOY_TEXT = {"CCT_1_16_16_8": 5486, "Transformer_DeepQuant": 1898}
"""Deeploy's ``.text`` (network + kernels, x86-64 gcc -O2) from issue 21: the targets."""


def networks(root: Path, contains: str) -> list[PeerTest]:
    """The peer tests under ``Models/`` and the benchmark networks beside the peer tests, filtered."""
    found = [peer for peer in find_peer_tests(root, "/Models/") if contains in f"/{peer.name}/"]
    mlperf = root.parent.parent / "bench" / "deeploy-mlperf"
    if mlperf.is_dir():
        found += [peer for peer in find_peer_tests(mlperf) if contains in f"/{peer.name}/"]
    return found


def row_of(peer: PeerTest, targets: list[CrossTarget], host: PluginHost, scratch: Path) -> list[str]:
    """Compile ``peer`` once, build and measure it for every target; its table row."""
    _, generated = compile_model(peer.model, CompileOptions(platform="generic-c", input_types=peer.input_types()), host)
    folder = scratch / "out"
    generated.write(folder)
    members = {Path(name).with_suffix(".o").name for name in generated.files if name.endswith(".c") and "/" not in name}
    short = Path(peer.name).name
    row = [short]
    for target in targets:
        library = build_library(folder, target, build_dir=f"build-{target.name}")
        sizes = linked_sizes(library, members, target.tool_prefix)
        total = sizes.total
        row += [str(total.text), str(sizes.network_text), str(total.rodata), str(total.data), str(total.bss)]
        if target is HOST:
            deeploy = DEEPLOY_TEXT.get(short)
            row += [str(deeploy), f"{total.text / deeploy:.2f}"] if deeploy else ["-", "-"]
    return row


def main() -> int:
    args = size_arguments(__doc__ or "", "network", TARGETS, "x86-64 and cortex-m4 when installed")
    root = peer_root_or_message()
    if root is None:
        return 2
    targets = installed_targets(TARGETS, args.target)
    header = ["network"]
    for target in targets:
        header += [f"{target.name} {column}" for column in COLUMNS]
        if target is HOST:
            header += ["deeploy text", "ratio"]
    host = make_host()
    rows: list[list[str]] = []
    failures: list[str] = []
    for peer in networks(root, args.filter):
        with tempfile.TemporaryDirectory(prefix="code_size_") as scratch:
            try:
                rows.append(row_of(peer, targets, host, Path(scratch)))
            except (DeeployError, CrossBuildError, RuntimeError) as error:
                failures.append(f"{peer.name}: {str(error).splitlines()[0]}")
    print("\n".join(format_rows(header, rows, args.rst)))
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
