"""How much of ONNX's own backend node test suite a platform passes: one case compiled, built, run and judged.

``onnx.backend.test.case.node.collect_testcases`` holds every node test of the
installed onnx (a model, its data sets and the expected outputs from ONNX's
reference).  A case is *passed* on a platform when each data set compiles,
builds, runs and matches within ``atol``/``rtol`` — either as written (every
graph input fed at run time) or with every input but the first turned into
a constant, since a deployment compiler may ask for constant weights, scales
and shapes.  A failure is sorted into one group (:data:`GROUPS`) with the
op it stopped at, so the summary says what to build next.

``bench/onnx_node_tests.py`` runs it over the whole suite and ``tests/test_onnx_node_breadth.py`` checks it;
plugin authors get ONNX's node tests through ``PlatformConformance``, so it lives here, not in the installed
:mod:`deeploy_core.testing`.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.errors import DeeployError
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.ir.dtypes import UnsupportedTypeError, from_onnx
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, compare_outputs, run_network
from deeploy_core.validate.build import BuildError
from deeploy_core.testing.node_cases import all_node_test_cases

if TYPE_CHECKING:
    from onnx.backend.test.case.test_case import TestCase

ATOL, RTOL = 1e-4, 1e-3
"""The breadth figure's tolerance (the issue's): looser than most cases' own, the same for every case."""

GROUPS = ("passed", "unsupported op", "unsupported type", "unsupported variant", "dynamic shape",
          "string/sequence/optional", "mismatch", "build or run failure", "compiler error")
"""Outcome groups, in the order the summary lists them."""

FURTHEST_FIRST = ("mismatch", "build or run failure", "compiler error", "unsupported variant", "unsupported type",
                  "unsupported op", "dynamic shape", "string/sequence/optional")
"""When both variants fail, the failure that got further is reported: it is what stands between the case and a pass."""

DEFAULT_DOMAINS = ("", "ai.onnx")
NON_TENSOR = ("sequence_type", "optional_type", "map_type", "sparse_tensor_type")


@dataclass(frozen=True)
class Outcome:
    """One case on one platform: its group, the op the failure names (if any) and a one-line reason."""

    case: str
    group: str
    op: str = ""
    reason: str = ""
    variant: str = ""
    """``as written`` or ``constants`` for a passed case."""

    @property
    def passed(self) -> bool:
        return self.group == "passed"

    def as_json(self) -> dict[str, str]:
        return {"case": self.case, "group": self.group, "op": self.op, "reason": self.reason, "variant": self.variant}


@lru_cache(maxsize=1)
def default_domain_cases() -> tuple[TestCase, ...]:
    """Every node test case of the installed onnx whose nodes are all in the default domain, by name."""
    kept = [case for case in all_node_test_cases() if case.model is not None
            and all(node.domain in DEFAULT_DOMAINS for node in _model(case).graph.node)]
    return tuple(sorted(kept, key=lambda case: case.name))


def _model(case: TestCase) -> onnx.ModelProto:
    """The case's model (every case :func:`default_domain_cases` keeps has one)."""
    assert case.model is not None, f"node test {case.name} has no model"
    return case.model


def case_named(name: str) -> TestCase:
    for case in default_domain_cases():
        if case.name == name:
            return case
    raise KeyError(name)


def _value_kind(value: onnx.ValueInfoProto) -> str:
    return value.type.WhichOneof("value") or "unknown"


def _as_array(value: object) -> np.ndarray | onnx.TensorProto | None:
    """A data set's value as numpy, or as the TensorProto numpy cannot hold (float8, int4, …); None otherwise."""
    if isinstance(value, np.ndarray) and value.dtype == object and value.size == 1 \
            and isinstance(value.reshape(-1)[0], onnx.TensorProto):
        value = value.reshape(-1)[0]
    if isinstance(value, onnx.TensorProto):
        try:  # float16 and bfloat16 data sets are protos, but C carries them: feed and compare them as numpy
            from_onnx(value.data_type)
        except UnsupportedTypeError:
            return value
        return numpy_helper.to_array(value)
    if isinstance(value, (np.ndarray, np.generic, int, float, bool)):
        array = np.asarray(value)
        return None if array.dtype == object else array
    return None


def _string_or_structure(case: TestCase) -> str | None:
    """Why the case cannot be a C network at all: a string, sequence, optional or map tensor (None if not)."""
    graph = _model(case).graph
    for value in (*graph.input, *graph.output):
        kind = _value_kind(value)
        if kind in NON_TENSOR:
            return f"{value.name!r} is a {kind.removesuffix('_type')}"
        if kind == "tensor_type" and value.type.tensor_type.elem_type == onnx.TensorProto.STRING:
            return f"{value.name!r} is a string tensor"
    return None


def variant_model(case: TestCase, inputs: list[object], constants: bool) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The case's model and run-time feeds: as written, or with every input but the first an initializer."""
    model = onnx.ModelProto()
    model.CopyFrom(_model(case))
    feeds: dict[str, np.ndarray] = {}
    kept = []
    for index, (value, raw) in enumerate(zip(_model(case).graph.input, inputs)):
        data = _as_array(raw)
        if data is None:
            raise TypeError(f"input {value.name!r} holds {type(raw).__name__}, not a tensor")
        if constants and index > 0:
            proto = data if isinstance(data, onnx.TensorProto) else numpy_helper.from_array(data)
            copy = onnx.TensorProto()
            copy.CopyFrom(proto)
            copy.name = value.name
            model.graph.initializer.append(copy)
            continue
        if isinstance(data, onnx.TensorProto):
            raise UnsupportedTypeError(f"input {value.name!r} has element type "
                                       f"{onnx.TensorProto.DataType.Name(data.data_type)}, which numpy cannot feed")
        feeds[value.name] = data
        kept.append(value)
    del model.graph.input[:]
    model.graph.input.extend(kept)
    return model, feeds


def _expected(outputs: list[object]) -> list[np.ndarray]:
    arrays = []
    for raw in outputs:
        data = _as_array(raw)
        if data is None or isinstance(data, onnx.TensorProto):
            raise UnsupportedTypeError("an expected output is not a numpy tensor (float8, int4, string, …)")
        arrays.append(data)
    return arrays


def _unsupported_outcome(case: str, error: UnsupportedModelError) -> Outcome:
    """The first unmapped node's op, grouped by how near a kernel came: no kernel, types, or the variant."""
    node = error.nodes[0]
    closest = node.closest()
    if closest is None or closest.category == "op":
        return Outcome(case, "unsupported op", node.op_type, node.describe())
    group = "unsupported type" if closest.category == "dtype" else "unsupported variant"
    return Outcome(case, group, node.op_type, node.describe())


_DYNAMIC = re.compile(r"dynamic|depends on the values|not static|unknown (shape|dimension)", re.IGNORECASE)
_TYPE = re.compile(r"element type|dtype|type \w+ is not supported|float16|bfloat16|float8|int4", re.IGNORECASE)


def _classified(case: str, error: BaseException) -> Outcome:
    """The group of an exception raised while compiling, building or running one case."""
    text = " ".join(str(error).split())[:300]
    if isinstance(error, UnsupportedModelError):
        return _unsupported_outcome(case, error)
    if isinstance(error, UnsupportedTypeError) or (isinstance(error, ModelImportError) and _TYPE.search(text)):
        return Outcome(case, "unsupported type", "", text)
    if isinstance(error, DeeployError) and _DYNAMIC.search(text):
        return Outcome(case, "dynamic shape", "", text)
    if isinstance(error, (BuildError, TimeoutError)) or "the generated network failed" in text:
        return Outcome(case, "build or run failure", "", text)
    if isinstance(error, DeeployError):
        return Outcome(case, "unsupported variant", "", text)
    return Outcome(case, "compiler error", "", f"{type(error).__name__}: {text}")


def _attempt(case: TestCase, platform: str, host: PluginHost, constants: bool, work: Path,
             runtime_cache: Path) -> Outcome:
    """Every data set of the case in one variant: compile once, build once, run and judge each data set."""
    variant = "constants" if constants else "as written"
    data_sets = list(case.data_sets or ())
    if not data_sets:
        return Outcome(case.name, "unsupported variant", "", "the case has no data set")
    model, _ = variant_model(case, list(data_sets[0][0]), constants)
    path = work / "model.onnx"
    onnx.save(model, path)
    _, generated = compile_model(path, CompileOptions(platform=platform, network_name="node_test"), host)
    executable = build_executable(generated, work / "build", Toolchain.from_environment(), runtime_cache)
    for inputs, outputs in data_sets:
        _, feeds = variant_model(case, list(inputs), constants)
        expected = _expected(list(outputs))
        ordered = {spec.name: feeds[spec.name] for spec in generated.inputs}
        actual, _ = run_network(executable, generated, ordered, repeats=1)
        if len(actual) != len(expected):
            return Outcome(case.name, "mismatch", "", f"{len(actual)} outputs, the reference has {len(expected)}")
        for spec, got, want in zip(generated.outputs, actual, expected):
            if tuple(np.shape(got)) != tuple(np.shape(want)) and np.size(got) != np.size(want):
                return Outcome(case.name, "mismatch", "", f"output {spec.name!r}: shape {list(np.shape(got))}, "
                                                          f"reference {list(np.shape(want))}")
        comparisons = compare_outputs(generated, [np.reshape(g, np.shape(w)) for g, w in zip(actual, expected)],
                                      expected, atol=ATOL, rtol=RTOL)
        for comparison in comparisons:
            if not comparison.ok:
                return Outcome(case.name, "mismatch", "", f"output {comparison.name!r}: {comparison.mismatches}/"
                                                          f"{comparison.size} elements off, max abs error "
                                                          f"{comparison.max_abs_error:.3g}")
    return Outcome(case.name, "passed", variant=variant)


def run_case(case: TestCase, platform: str, host: PluginHost, runtime_cache: Path) -> Outcome:
    """The case on the platform: as written, then (if that fails) with constant parameters."""
    structure = _string_or_structure(case)
    if structure is not None:
        return Outcome(case.name, "string/sequence/optional", "", structure)
    failures: list[Outcome] = []
    variants = (False, True) if len(_model(case).graph.input) > 1 else (False,)
    for constants in variants:
        with tempfile.TemporaryDirectory(prefix="deeploy-node-test-") as scratch:
            try:
                outcome = _attempt(case, platform, host, constants, Path(scratch), runtime_cache)
            except Exception as error:  # noqa: BLE001 - every failure is a result here, sorted into a group
                outcome = _classified(case.name, error)
        if outcome.passed:
            return outcome
        failures.append(outcome)
    return min(failures, key=lambda outcome: FURTHEST_FIRST.index(outcome.group))


def iter_cases(pattern: str | None = None) -> Iterator[TestCase]:
    """Default-domain cases whose names match the regular expression ``pattern`` (all when None)."""
    expression = re.compile(pattern) if pattern else None
    for case in default_domain_cases():
        if expression is None or expression.search(case.name):
            yield case
