"""What real exporters emit, and how far the compiled C gets: one row per model, exporter and precision.

Runs every case of ``tests/models`` (torchvision, timm and torch.nn networks
exported by torch.onnx.export's TorchScript and dynamo exporters, and int8
QDQ versions quantised by ONNX Runtime), the heavy ones included, and prints
for each whether it validates against ONNX Runtime on generic-c and on
pulp-cluster, and the largest error: relative to the output's max ``|value|``
for float outputs, in quantisation steps for int8 ones.  Refused cases show
the compiler's one-line error, listed again in full under the table.  Needs
the ``models`` extra (``make models``); exports are cached as the tests'.

    python bench/exporter_table.py [--filter TEXT] [--skip-heavy] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for tests.models

from deeploy_core.errors import DeeployError  # noqa: E402
from deeploy_core.plugins import PluginHost  # noqa: E402
from tests.models.cases import Case, all_cases  # noqa: E402
from tests.models.judge import validate_case  # noqa: E402

PLATFORMS = ("generic-c", "pulp-cluster")


def make_host() -> PluginHost:
    """The two platforms only, whatever else is installed."""
    from deeploy_generic_c import plugin as generic_c_plugin
    from deeploy_pulp_cluster import plugin as pulp_cluster_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return host


def run(case: Case, host: PluginHost, runtime_cache: Path) -> tuple[str, str, str]:
    """(status, error cell, failure line or '') of one case."""
    try:
        outcome = validate_case(case, host, runtime_cache)
    except DeeployError as error:
        return "refused", "-", str(error).splitlines()[0]
    except Exception as error:  # a crash is a finding here, not a reason to stop the table
        return "crashed", "-", f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    if outcome.lsb_error is not None:
        error_cell = f"{outcome.lsb_error:g} LSB"
    else:
        error_cell = "-" if outcome.relative_error is None else f"{outcome.relative_error:.2g}"
    status = "ok" if outcome.ok else "MISMATCH"
    return status, error_cell, "" if outcome.ok else outcome.describe()


def main() -> int:
    from onnx_graphsurgeon.logger import G_LOGGER

    G_LOGGER.severity = G_LOGGER.ERROR  # its folding warnings go to stdout, which holds the table
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="only cases whose id contains this text")
    parser.add_argument("--skip-heavy", action="store_true", help="leave out the networks with millions of weights")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    arguments = parser.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("error: torch is not installed; install the models extra (make models)", file=sys.stderr)
        return 2
    import tempfile

    cases = [case for case in all_cases() if arguments.filter in case.id and not (arguments.skip_heavy and case.heavy)]
    host = make_host()
    rows: dict[tuple[str, str, str], dict[str, tuple[str, str]]] = {}
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="exporter-table-") as scratch:
        for case in cases:
            start = time.perf_counter()
            status, error_cell, failure = run(case, host, Path(scratch))
            print(f"{case.id}: {status} ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
            precision = case.precision if case.quantization is None else f"int8 {case.quantization}"
            rows.setdefault((case.model.name, case.exporter, precision), {})[case.platform] = (status, error_cell)
            if failure:
                failures.append(f"{case.id}: {status}: {failure}")
    header = ["model", "exporter", "precision", *PLATFORMS, "max error (generic-c / pulp-cluster)"]
    table = [header]
    for (model, exporter, precision), results in rows.items():
        statuses = [results.get(platform, ("-", "-"))[0] for platform in PLATFORMS]
        errors = " / ".join(results.get(platform, ("-", "-"))[1] for platform in PLATFORMS)
        table.append([model, exporter, precision, *statuses, errors])
    print_table(table, arguments.markdown)
    if failures:
        print("\nfailures:")
        for line in failures:
            print(f"  {line}")
    return 0


def print_table(table: list[list[str]], markdown: bool) -> None:
    widths = [max(len(row[column]) for row in table) for column in range(len(table[0]))]
    for index, row in enumerate(table):
        cells = [cell.ljust(width) for cell, width in zip(row, widths)]
        print(f"| {' | '.join(cells)} |" if markdown else "  ".join(cells).rstrip())
        if index == 0:
            print(f"|{'|'.join('-' * (width + 2) for width in widths)}|" if markdown else "  ".join("-" * w for w in widths))


if __name__ == "__main__":
    sys.exit(main())
