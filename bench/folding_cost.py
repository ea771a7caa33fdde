"""Compile time of a TorchScript export against its dynamo export, and the share shape folding takes (issue 31).

TorchScript exports compute sizes at run time (``Shape → Gather → Div →
Concat → Reshape``), which the front end folds (deeploy_core/frontend/
shape_folding.py); dynamo exports carry static sizes.  The issue's target:
a MobileViT-sized TorchScript export compiles in under 1.5× the time of its
dynamo export.  By default both exports of the zoo's
``mobilevit_traced_sizes`` (mobilevit_xxs's layout with HuggingFace-style
size arithmetic, tests/models/small_networks.py; exported and cached on
first use, needs the ``models`` extra) are compiled for generic-c in this
process, alternating, after one warm-up each; ``--legacy``/``--dynamo`` time
other files.  Printed per exporter: nodes, median compile seconds, median
seconds in shape folding and its share; then the ratio.  ``--cli`` also times
``deeploy-core compile`` in a new process per run, as a user runs it (the
interpreter's start and imports included, the same for both exporters).

    python bench/folding_cost.py [--repeats 5] [--cli] [--legacy A.onnx --dynamo B.onnx]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for tests.models

import onnx  # noqa: E402

import deeploy_core.frontend.importer as importer  # noqa: E402
from deeploy_core.api import CompileOptions, compile_model  # noqa: E402
from deeploy_core.plugins import PluginHost  # noqa: E402

TARGET_RATIO = 1.5
DEFAULT_MODEL = "mobilevit_traced_sizes"


class FoldingClock:
    """Seconds spent in the importer's shape folding since the last reset (the importer's own reference, wrapped)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.wrapped: Callable[..., int] = importer.fold_shape_arithmetic

    def __call__(self, *args: Any, **kwargs: Any) -> int:
        started = time.perf_counter()
        try:
            return self.wrapped(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - started


def _zoo_exports() -> dict[str, Path]:
    from tests.models.export import exported
    from tests.models.zoo import BY_NAME

    return {exporter: exported(BY_NAME[DEFAULT_MODEL], exporter) for exporter in ("legacy", "dynamo")}


def _compile_seconds(path: Path, host: PluginHost, clock: FoldingClock) -> tuple[float, float]:
    clock.seconds = 0.0
    started = time.perf_counter()
    compile_model(path, CompileOptions(platform="generic-c"), host)
    return time.perf_counter() - started, clock.seconds


def _cli_seconds(path: Path, output: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(path), "-o", str(output), "--force", "--quiet",
                    "--platform", "generic-c"], check=True, capture_output=True)
    return time.perf_counter() - started


def _cli_ratio(paths: dict[str, Path], repeats: int) -> None:
    """Median wall seconds of ``deeploy-core compile`` per exporter, alternating, after one warm-up each."""
    samples: dict[str, list[float]] = {exporter: [] for exporter in paths}
    with tempfile.TemporaryDirectory(prefix="folding-cost-") as folder:
        for exporter, path in paths.items():
            _cli_seconds(path, Path(folder) / exporter)
        for _ in range(repeats):
            for exporter, path in paths.items():
                samples[exporter].append(_cli_seconds(path, Path(folder) / exporter))
    medians = {exporter: statistics.median(values) for exporter, values in samples.items()}
    print("deeploy-core compile (new process): " + ", ".join(f"{exporter} {seconds:.2f} s"
                                                           for exporter, seconds in medians.items())
          + f"; legacy / dynamo: {medians['legacy'] / medians['dynamo']:.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--legacy", type=Path, help="a TorchScript export (default: the zoo's mobilevit_traced_sizes)")
    parser.add_argument("--dynamo", type=Path, help="the dynamo export of the same network")
    parser.add_argument("--cli", action="store_true", help="also time deeploy-core compile in a new process")
    arguments = parser.parse_args()
    if (arguments.legacy is None) != (arguments.dynamo is None):
        parser.error("give both --legacy and --dynamo, or neither")
    paths = {"legacy": arguments.legacy, "dynamo": arguments.dynamo} if arguments.legacy else _zoo_exports()

    from deeploy_generic_c import plugin as generic_c_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    clock = FoldingClock()
    importer.fold_shape_arithmetic = clock  # type: ignore[assignment]

    samples: dict[str, list[tuple[float, float]]] = {exporter: [] for exporter in paths}
    for exporter, path in paths.items():
        _compile_seconds(path, host, clock)  # warm-up: imports, the plugin's kernels, the file cache
    for _ in range(arguments.repeats):
        for exporter, path in paths.items():
            samples[exporter].append(_compile_seconds(path, host, clock))

    print(f"{'exporter':<8} {'nodes':>6} {'compile s':>10} {'folding s':>10} {'share':>6}")
    medians: dict[str, float] = {}
    for exporter, path in paths.items():
        compile_s = statistics.median(total for total, _ in samples[exporter])
        folding_s = statistics.median(folding for _, folding in samples[exporter])
        medians[exporter] = compile_s
        nodes = len(onnx.load(str(path), load_external_data=False).graph.node)
        print(f"{exporter:<8} {nodes:>6} {compile_s:>10.2f} {folding_s:>10.2f} {folding_s / compile_s:>6.0%}")
    ratio = medians["legacy"] / medians["dynamo"]
    verdict = "meets" if ratio < TARGET_RATIO else "misses"
    print(f"legacy / dynamo: {ratio:.2f}x ({verdict} the {TARGET_RATIO}x target; median of {arguments.repeats})")
    if arguments.cli:
        _cli_ratio(paths, arguments.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
