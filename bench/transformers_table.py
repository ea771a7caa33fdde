"""HuggingFace transformers at small configs through both torch exporters: does the compiled C match ONNX Runtime?

One row per model and exporter (``tests/models/transformers_cases.py``):
whether it validates on generic-c and, for the CNN-like ones, on pulp-cluster
(``-`` where a platform is not tried), the largest error relative to the
output's max ``|value|`` (the worst platform), and the compiler's time per
platform (seconds, its stages only: no gcc, no run).  Refused cases show
``refused``, with the compiler's one-line error listed under the table.
Needs the ``models`` extra with transformers (``make models``); exports are
cached as the tests'.

    python bench/transformers_table.py [--filter TEXT] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for tests.models

from bench.exporter_table import PLATFORMS, make_host, print_table  # noqa: E402
from deeploy_core.errors import DeeployError  # noqa: E402
from deeploy_core.plugins import PluginHost  # noqa: E402
from tests.models.transformers_cases import (TransformersCase, transformers_cases,  # noqa: E402
                                             validate_transformers_case)

Cell = tuple[str, float | None, float | None]
"""Status, relative error, compile seconds."""


def run(case: TransformersCase, host: PluginHost, runtime_cache: Path) -> tuple[Cell, str]:
    """One case's cell and its failure line ('' when it passes)."""
    try:
        result = validate_transformers_case(case, host, runtime_cache)
    except DeeployError as error:
        return ("refused", None, None), str(error).splitlines()[0]
    except Exception as error:  # a crash is a finding here, not a reason to stop the table
        return ("crashed", None, None), f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    outcome = result.outcome
    status = "ok" if outcome.ok else "MISMATCH"
    return (status, outcome.relative_error, result.compile_seconds), "" if outcome.ok else outcome.describe()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="only cases whose id contains this text")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    arguments = parser.parse_args()
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        print("error: torch or transformers is not installed; install the models extra (make models)", file=sys.stderr)
        return 2
    host = make_host()
    rows: dict[tuple[str, str], dict[str, Cell]] = {}
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="transformers-table-") as scratch:
        for case in transformers_cases():
            if arguments.filter not in case.id:
                continue
            start = time.perf_counter()
            cell, failure = run(case, host, Path(scratch))
            print(f"{case.id}: {cell[0]} ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
            rows.setdefault((case.model.name, case.exporter), {})[case.platform] = cell
            if failure:
                failures.append(f"{case.id}: {cell[0]}: {failure}")
    table = [["model", "exporter", *PLATFORMS, "max rel error", f"compile s ({' / '.join(PLATFORMS)})"]]
    for (model, exporter), cells in rows.items():
        errors = [cell[1] for cell in cells.values() if cell[1] is not None]
        seconds = [cells.get(platform, ("-", None, None))[2] for platform in PLATFORMS]
        table.append([model, exporter, *(cells.get(platform, ("-", None, None))[0] for platform in PLATFORMS),
                      f"{max(errors):.2g}" if errors else "-",
                      " / ".join("-" if value is None else f"{value:.1f}" for value in seconds)])
    print_table(table, arguments.markdown)
    if failures:
        print("\nfailures:")
        for line in failures:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
