"""ONNX node test cases judged in batches: several single-node cases merged into one network, compiled and run once.

A node test is one small layer; what costs is the fixed work around it (the
compiler's pipeline, a C compiler run, a link, a process start).  Merging a
batch of cases that share their opset imports into one model — every name
prefixed with the case's index, the graphs side by side, nothing connected —
pays that once per batch, and each case is still judged alone: its outputs
against its expected values under its own tolerance.  Whatever a batch cannot
do together falls back to the cases one by one, exactly as a single case is
judged: a node the platform refuses makes that case a skip with the
platform's reason and the rest is compiled again; a front-end refusal, a
build or run failure sends the whole batch to single judgement, so one bad
case can neither hide nor fail another.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import onnx

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.errors import DeeployError
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.node_cases import NodeCase
from deeploy_core.tolerance import Tolerance, rule_for
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_core.validate.board_run import build_board_program, run_on_board
from deeploy_core.validate.compare import judge_output

BATCH_SIZE = 16
"""Cases per merged network: large enough to amortise the fixed costs, small enough that a fallback is cheap."""

Status = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class CaseVerdict:
    """How one case ended, with the message pytest shows (the failure or the skip reason)."""

    status: Status
    message: str = ""


def case_tolerance(case: NodeCase) -> Tolerance:
    """The case's own tolerance, floored as the conformance suite always has (atol 1e-6, rtol 1e-5)."""
    return Tolerance(max(case.atol, 1e-6), max(case.rtol, 1e-5), None)


def judge_single(case: NodeCase, platform: str, host: PluginHost, runtime_cache: Path) -> CaseVerdict:
    """One case compiled, built, run and compared on its own."""
    with tempfile.TemporaryDirectory(prefix="deeploy-node-case-") as scratch:
        model_path = Path(scratch) / f"{case.op_type}.onnx"
        onnx.save(case.model, model_path)
        options = CompileOptions(platform=platform, network_name=case.name)
        tolerance = case_tolerance(case)
        try:
            _, result = validate_with_data(model_path, options, host, case.inputs, case.outputs,
                                           atol=tolerance.atol, rtol=tolerance.rtol, cache_dir=runtime_cache)
        except UnsupportedModelError as error:
            return CaseVerdict("skipped", f"variant not supported: {error.nodes[0].describe()}")
        except ModelImportError as error:
            return CaseVerdict("skipped", f"model refused by the front end: {error}")
    failures = [f"{case.name}: output {c.name} max abs error {c.max_abs_error:.3g}, {c.mismatches}/{c.size} "
                f"elements outside tolerance" for c in result.comparisons if not c.ok]
    return CaseVerdict("failed", "; ".join(failures)) if failures else CaseVerdict("passed")


def _has_subgraphs(model: onnx.ModelProto) -> bool:
    """Control-flow bodies read outer names, which the renaming below would not follow."""
    return any(attribute.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
               for node in model.graph.node for attribute in node.attribute)


def _opsets(model: onnx.ModelProto) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((entry.domain, entry.version) for entry in model.opset_import))


def _prefix(index: int) -> str:
    return f"c{index}_"


def merged_model(cases: Sequence[NodeCase]) -> onnx.ModelProto:
    """The cases side by side in one model: every value and node name prefixed with ``c<index>_``."""
    graph = onnx.GraphProto(name="node_case_batch")
    for index, case in enumerate(cases):
        prefix = _prefix(index)
        source = case.model.graph

        def renamed(name: str) -> str:
            return prefix + name if name else name

        for position, node in enumerate(source.node):
            copy = graph.node.add()
            copy.CopyFrom(node)
            copy.name = prefix + (node.name or f"node{position}")
            copy.input[:] = [renamed(name) for name in node.input]
            copy.output[:] = [renamed(name) for name in node.output]
        for field in ("input", "output", "value_info", "initializer"):
            for item in getattr(source, field):
                copy = getattr(graph, field).add()
                copy.CopyFrom(item)
                copy.name = prefix + item.name
    first = cases[0].model
    model = onnx.helper.make_model(graph, opset_imports=list(first.opset_import))
    model.ir_version = max(case.model.ir_version for case in cases)
    return model


def _case_of(node_name: str, count: int) -> int | None:
    """The index of the case whose prefix starts ``node_name`` (None for a name the merge did not make)."""
    if not node_name.startswith("c"):
        return None
    head = node_name[1:].split("_", 1)[0]
    return int(head) if head.isdigit() and int(head) < count else None


class BatchJudge:
    """Judges the cases of one platform in batches; ``verdict(case)`` judges the case's batch on first request."""

    def __init__(self, cases: Sequence[NodeCase], platform: str, host: PluginHost, runtime_cache: Path,
                 batch_size: int = BATCH_SIZE, single: Callable[..., CaseVerdict] = judge_single) -> None:
        self.platform, self.host, self.runtime_cache, self._single = platform, host, runtime_cache, single
        self._verdicts: dict[str, CaseVerdict] = {}
        self._batch_of: dict[str, list[NodeCase]] = {}
        groups: dict[tuple, list[NodeCase]] = {}
        for case in sorted(cases, key=lambda c: c.name):
            key = ("single", case.name) if _has_subgraphs(case.model) else _opsets(case.model)
            groups.setdefault(key, []).append(case)
        for members in groups.values():
            for start in range(0, len(members), batch_size):
                batch = members[start:start + batch_size]
                for case in batch:
                    self._batch_of[case.name] = batch

    def verdict(self, case: NodeCase) -> CaseVerdict:
        if case.name not in self._verdicts:
            batch = self._batch_of.get(case.name, [case])
            self._verdicts.update(self._judge_batch(batch))
        return self._verdicts[case.name]

    def _judge_singly(self, cases: Sequence[NodeCase]) -> dict[str, CaseVerdict]:
        return {case.name: self._single(case, self.platform, self.host, self.runtime_cache) for case in cases}

    def _judge_batch(self, batch: Sequence[NodeCase]) -> dict[str, CaseVerdict]:
        if len(batch) == 1:
            return self._judge_singly(batch)
        verdicts: dict[str, CaseVerdict] = {}
        remaining = list(batch)
        with tempfile.TemporaryDirectory(prefix="deeploy-node-batch-") as scratch:
            while len(remaining) > 1:
                path = Path(scratch) / "batch.onnx"
                onnx.save(merged_model(remaining), path)
                try:
                    _, generated = compile_model(path, CompileOptions(platform=self.platform,
                                                                      network_name="node_case_batch"), self.host)
                except UnsupportedModelError as error:
                    found = {_case_of(node.node, len(remaining)): node for node in error.nodes}
                    if None in found:
                        return {**verdicts, **self._judge_singly(remaining)}
                    refused = {index: node for index, node in found.items() if index is not None}
                    for index, node in refused.items():
                        verdicts[remaining[index].name] = CaseVerdict("skipped", f"variant not supported: "
                                                                                 f"{node.describe()}")
                    remaining = [case for index, case in enumerate(remaining) if index not in refused]
                    continue
                except DeeployError:
                    return {**verdicts, **self._judge_singly(remaining)}
                try:
                    return {**verdicts, **self._run_merged(remaining, generated, Path(scratch))}
                except DeeployError:
                    return {**verdicts, **self._judge_singly(remaining)}
        return {**verdicts, **self._judge_singly(remaining)}

    def _run_merged(self, cases: Sequence[NodeCase], generated, scratch: Path) -> dict[str, CaseVerdict]:  # noqa: ANN001
        feeds = {_prefix(index) + name: value for index, case in enumerate(cases) for name, value in case.inputs.items()}
        inputs = {spec.name: feeds[spec.name] for spec in generated.inputs}
        board = generated.runtime.board
        if board is not None:  # a microcontroller platform: its cross compiler and its board's emulator
            program = build_board_program(generated, scratch / "build", inputs, repeats=1, cache_dir=self.runtime_cache)
            actual, _ = run_on_board(board, program, generated)
        else:
            executable = build_executable(generated, scratch / "build", Toolchain.from_environment(),
                                          self.runtime_cache)
            actual, _ = run_network(executable, generated, inputs, repeats=1)
        expected_names = [_prefix(index) + output.name for index, case in enumerate(cases)
                          for output in case.model.graph.output]
        if [spec.name for spec in generated.outputs] != expected_names:
            raise DeeployError("the merged network's outputs are not the cases' outputs in order")
        verdicts: dict[str, CaseVerdict] = {}
        position = 0
        for case in cases:
            failures = []
            tolerance = case_tolerance(case)
            for want in case.outputs:
                spec, got = generated.outputs[position], actual[position]
                position += 1
                comparison = judge_output(spec.name, got, want, rule_for(tolerance, spec.dtype, spec.step), spec.step)
                if not comparison.ok:
                    failures.append(f"{case.name}: output {spec.name.removeprefix(_prefix(cases.index(case)))} "
                                    f"max abs error {comparison.max_abs_error:.3g}, {comparison.mismatches}/"
                                    f"{comparison.size} elements outside tolerance")
            verdicts[case.name] = CaseVerdict("failed", "; ".join(failures)) if failures else CaseVerdict("passed")
        return verdicts
