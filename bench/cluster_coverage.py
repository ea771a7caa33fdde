"""Does what runs in generic C also run on the cluster?  One row per network, validated on both platforms (issue 32).

Networks: Deeploy's peer tests and MLPerf networks (``../shared``), the
integer-transformer dialect networks and CCT blocks of the test suite, the
exporter zoo's networks (``tests/models``), the LSTM keyword spotter with hidden
128 (exported here: its gate weights are larger than L1), and the Keras networks converted by
TFLite and tf2onnx, float and int8 (``deeploy_core.testing.tflite_export``),
that are cached already (pass ``--exports`` to export missing ones, which
needs the ``models`` and ``quant`` extras).
Columns: generic-c (untiled), pulp-cluster with its defaults, at L1 32 KiB and
16 KiB, and the smallest L1 that works: the tiler's bound for the network
(its diagnosis at an L1 of one byte, with single buffering) or, where the
tables of that many tiles outgrow L2, the smallest size above it that compiles
(within 1 %), validated at that size.  A cell
is ``ok``, ``MISMATCH`` or ``refused`` (the compiler's one-line reason is
listed under the table); ``-`` where generic-c itself does not run it.

    python bench/cluster_coverage.py [--jobs 2] [--filter TEXT] [--markdown] [--exports]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for tests.*

from deeploy_core.errors import DeeployError  # noqa: E402

L1_SIZES = (32768, 16384)
COLUMNS = ("generic-c", "pulp default", "L1 32 KiB", "L1 16 KiB", "smallest L1")


@dataclass(frozen=True)
class NetworkCase:
    """A network by kind and key; workers rebuild it (dialect networks are composed in the worker)."""

    kind: str  # "peer", "dialect", "cct", "zoo", "kws" (exported here) or "keras"
    key: str

    @property
    def name(self) -> str:
        if self.kind == "peer":
            folder = Path(self.key)
            return f"mlperf/{folder.name}" if folder.parent.name == "deeploy-mlperf" else \
                self.key.split("peer-tests/deeploy/")[-1]
        return f"{self.kind}/{self.key}"


def _cases(with_exports: bool) -> list[NetworkCase]:
    from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

    cases: list[NetworkCase] = []
    root = peer_tests_root(Path(__file__).resolve().parent)
    if root is not None:
        cases += [NetworkCase("peer", str(peer.folder)) for peer in find_peer_tests(root)]
        mlperf = root.parent.parent / "bench" / "deeploy-mlperf"
        cases += [NetworkCase("peer", str(folder)) for folder in sorted(mlperf.iterdir())
                  if (folder / "network.onnx").is_file()] if mlperf.is_dir() else []
    from tests.test_dialect_networks import NETWORKS

    cases += [NetworkCase("dialect", name) for name in NETWORKS]
    cases += [NetworkCase("cct", f"{softmax}/{heads}") for softmax in ("ITAMax", "ITAPartialMax") for heads in (8, 64)]
    cases += [NetworkCase("zoo", name) for name in _zoo_names(with_exports)]
    if _zoo_names(True):  # torch is there: the LSTM keyword spotter, gate weights larger than L1
        cases.append(NetworkCase("kws", "lstm-hidden128"))
    cases += [NetworkCase("keras", f"{name}/{precision}") for name in _keras_names(with_exports)
              for precision in ("float", "int8")]
    return cases


def _keras_names(with_exports: bool) -> list[str]:
    """The Keras networks converted through TFLite and tf2onnx (deeploy_core.testing.tflite_export) already cached."""
    from deeploy_core.testing.models.keras_mlperf import NETWORKS
    from deeploy_core.testing.tflite_export import cache_folder, cache_key

    return [name for name in NETWORKS if with_exports or (cache_folder() / cache_key() / name).is_dir()]


def _zoo_names(with_exports: bool) -> list[str]:
    try:
        from tests.models.export import cache_folder, cache_key
        from tests.models.zoo import ZOO
    except ImportError:  # no torch: the zoo cannot even be listed
        return []
    names = []
    for model in ZOO:
        if model.heavy:
            continue
        if with_exports or (cache_folder() / cache_key() / f"{model.name}-legacy.onnx").is_file():
            names.append(model.name)
    return names


Validator = Callable[["CompileOptions"], bool]  # noqa: F821 - imported in the worker


def _validator(case: NetworkCase, host: object, folder: Path) -> tuple[Path, Validator, dict]:
    """The network's model file, a function validating it under some options, and its input types."""
    import numpy as np
    import onnx

    from deeploy_core.api import validate_model, validate_with_data
    from deeploy_core.ir.dtypes import INT8

    if case.kind == "peer":
        from deeploy_core.testing.peer_tests import PeerTest

        peer = PeerTest(case.key.split("peer-tests/deeploy/")[-1], Path(case.key))
        tolerance = 1e-4 if peer.is_float else 0.0
        types = peer.input_types()

        def validate_peer(options):  # type: ignore[no-untyped-def]
            _, result = validate_model(peer.model, options, host, inputs_npz=peer.inputs, outputs_npz=peer.outputs,
                                       atol=tolerance, rtol=tolerance, repeats=1, cache_dir=folder / "cache")
            return result.ok

        return peer.model, validate_peer, types
    if case.kind in ("dialect", "cct"):
        if case.kind == "dialect":
            from tests.test_dialect_networks import NETWORKS

            built = NETWORKS[case.key]()
        else:
            from tests.test_cct_on_the_cluster import cct_block

            softmax, heads = case.key.split("/")
            built = cct_block(softmax, int(heads))
        composed = built.composer
        model = folder / f"{composed.name}.onnx"
        onnx.save(composed.model(built.outputs), model)
        inputs = {name: composed.values[name] for name in composed.input_dtypes}
        expected = [np.asarray(composed.values[name]) for name in built.outputs]

        def validate_composed(options):  # type: ignore[no-untyped-def]
            _, result = validate_with_data(model, options, host, inputs, expected, atol=0.0, rtol=0.0, repeats=1,
                                           cache_dir=folder / "cache")
            return result.ok

        return model, validate_composed, {name: INT8 for name in composed.input_dtypes}
    if case.kind == "kws":
        import torch

        from tests.models.small_networks import KeywordSpotter

        torch.manual_seed(32)
        example = torch.randn(1, 10, 49)
        model = folder / "keyword_spotter_128.onnx"
        torch.onnx.export(KeywordSpotter(features=10, hidden=128).eval(), (example,), str(model), dynamo=False,
                          opset_version=17, input_names=["frames"])

        def validate_spotter(options):  # type: ignore[no-untyped-def]
            _, result = validate_with_data(model, options, host, {"frames": example.numpy()}, repeats=1,
                                           cache_dir=folder / "cache")
            return result.ok

        return model, validate_spotter, {}
    if case.kind == "keras":
        from deeploy_core.testing.tflite_export import converted

        name, precision = case.key.split("/")
        files = converted(name)
        path = files.float_onnx if precision == "float" else files.int8_onnx
    else:
        from tests.models.export import exported
        from tests.models.zoo import BY_NAME

        path = exported(BY_NAME[case.key], "legacy")

    def validate_export(options):  # type: ignore[no-untyped-def]
        _, result = validate_model(path, options, host, repeats=1, cache_dir=folder / "cache")
        return result.ok

    return path, validate_export, {}


def _cell(validate: Validator, options: object) -> tuple[str, str]:
    try:
        return ("ok", "") if validate(options) else ("MISMATCH", "")
    except DeeployError as error:
        return "refused", str(error).splitlines()[0]


def _smallest_l1(model: Path, host: object, types: dict) -> int | None:
    from deeploy_core.api import CompileOptions, compile_model

    try:
        compile_model(model, CompileOptions(platform="pulp-cluster", level_sizes={"L1": 1}, buffering="single",
                                            input_types=types), host)
    except DeeployError as error:
        found = re.search(r"L1 needs at least (\d+) bytes", str(error))
        return int(found.group(1)) if found else None
    return 1


def _compiles(model: Path, host: object, types: dict, l1: int) -> str:
    """"" when the network compiles for pulp-cluster at ``l1`` (single buffering), else the first line of why not."""
    from deeploy_core.api import CompileOptions, compile_model

    try:
        compile_model(model, CompileOptions(platform="pulp-cluster", level_sizes={"L1": l1}, buffering="single",
                                            input_types=types), host)
    except DeeployError as error:
        return str(error).splitlines()[0] or "refused"
    return ""


def _smallest_that_compiles(model: Path, host: object, types: dict, bound: int) -> tuple[int, str]:
    """The smallest L1 at or above the tiler's per-layer ``bound`` that compiles, and why ``bound`` itself did not.

    The bound is each layer's own least need; at sizes that small the tables of
    many tiny tiles (stored in L2) can outgrow L2 together, so the size that
    works is searched: doubling from the bound, then bisecting.
    """
    why = _compiles(model, host, types, bound)
    if not why:
        return bound, ""
    low, high = bound, bound * 2
    while _compiles(model, host, types, high):
        low, high = high, high * 2
        if high > 1 << 24:
            return bound, why
    while high - low > max(1, low // 100):  # within 1 %
        middle = (low + high) // 2
        low, high = (low, middle) if not _compiles(model, host, types, middle) else (middle, high)
    return high, why


def run_case(case: NetworkCase) -> tuple[str, list[str], list[str]]:
    """One row: the network's name, its cells and the reasons of its refusals."""
    from deeploy_core.api import CompileOptions
    from deeploy_core.plugins import PluginHost
    from deeploy_generic_c import plugin as generic_c_plugin
    from deeploy_pulp_cluster import plugin as pulp_cluster_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    cells: list[str] = []
    reasons: list[str] = []
    with tempfile.TemporaryDirectory(prefix="coverage-") as scratch:
        folder = Path(scratch)
        (folder / "cache").mkdir()
        try:
            model, validate, types = _validator(case, host, folder)
        except Exception as error:  # noqa: BLE001 - a network the bench cannot even build: say so in its row
            return case.name, ["error"] * len(COLUMNS), [f"{type(error).__name__}: {error}"]
        status, reason = _cell(validate, CompileOptions(platform="generic-c", input_types=types))
        cells.append(status)
        reasons += [f"generic-c: {reason}"] if reason else []
        if status != "ok":
            return case.name, cells + ["-"] * (len(COLUMNS) - 1), reasons
        settings: list[tuple[str, dict[str, int]]] = [("default", {})]
        settings += [(f"L1 {size}", {"L1": size}) for size in L1_SIZES]
        for label, sizes in settings:
            status, reason = _cell(validate, CompileOptions(platform="pulp-cluster", level_sizes=sizes,
                                                            input_types=types))
            cells.append(status)
            reasons += [f"pulp-cluster {label}: {reason}"] if reason else []
        bound = _smallest_l1(model, host, types)
        if bound is None:
            cells.append("?")
        else:
            smallest, why = _smallest_that_compiles(model, host, types, bound)
            status, reason = _cell(validate, CompileOptions(platform="pulp-cluster", level_sizes={"L1": smallest},
                                                            buffering="single", input_types=types))
            cells.append(f"{smallest} {status}" + (f" (bound {bound})" if smallest != bound else ""))
            reasons += [f"pulp-cluster L1 {smallest}: {reason}"] if reason else []
            reasons += [f"pulp-cluster L1 {bound} (the tiler's bound): {why}"] if why else []
    return case.name, cells, reasons


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--filter", default="", help="only networks whose name contains this text")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--exports", action="store_true", help="export zoo networks that are not cached yet")
    arguments = parser.parse_args()
    cases = [case for case in _cases(arguments.exports) if arguments.filter in case.name]
    rows = []
    with ProcessPoolExecutor(max_workers=max(1, arguments.jobs)) as pool:
        for number, row in enumerate(pool.map(run_case, cases), 1):
            rows.append(row)  # progress on stderr: a long run that is cut short still shows what it did
            print(f"[{number}/{len(cases)}] {row[0]}: {' | '.join(row[1])}", file=sys.stderr, flush=True)
    width = max([len(name) for name, _, _ in rows] + [7])
    header = ["network".ljust(width), *COLUMNS]
    if arguments.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
    else:
        print("  ".join(f"{cell:<14}" if index else cell for index, cell in enumerate(header)))
    for name, cells, _ in rows:
        line = [name.ljust(width), *cells]
        print("| " + " | ".join(line) + " |" if arguments.markdown else
              "  ".join(f"{cell:<14}" if index else cell for index, cell in enumerate(line)))
    runs_on_generic = [cells for _, cells, _ in rows if cells[0] == "ok"]
    on_cluster = sum(1 for cells in runs_on_generic if cells[1] == "ok")
    print(f"\n{len(rows)} networks; {len(runs_on_generic)} validate on generic-c; of those, {on_cluster} validate on "
          f"pulp-cluster with its defaults, {sum(1 for c in runs_on_generic if c[2] == 'ok')} at L1 32 KiB, "
          f"{sum(1 for c in runs_on_generic if c[3] == 'ok')} at L1 16 KiB")
    failures = [(name, reason) for name, _, reasons in rows for reason in reasons]
    if failures:
        print("\nnot ok:")
        for name, reason in failures:
            print(f"  {name}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
