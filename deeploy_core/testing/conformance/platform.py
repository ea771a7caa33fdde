"""The contract of platform extensions: every operator the platform claims compiles, runs and matches.

For every op type in the platform's operator table, the ONNX backend node test
cases of that op (every element type C carries; see
:mod:`deeploy_core.testing.node_cases`) are compiled, built with the system C
compiler, run and compared with ONNX's expected outputs, each within the
case's own tolerance — in merged batches that pay the compiler's and the
build's fixed costs once (:mod:`deeploy_core.testing.conformance.node_batches`).  A case that uses a
variant the platform reports as unsupported (with the usual one-line reason) is
skipped with that reason, so the run lists exactly which cases ran.  Output
must also be deterministic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.loading import load_plugin_under_test
from deeploy_core.testing.conformance.node_batches import BatchJudge
from deeploy_core.testing.node_cases import NodeCase, node_cases


class PlatformConformance:
    """Subclass with ``plugin``, ``plugin_name`` and ``platform`` (the platform's registered name).

    ``node_case`` is parametrised by deeploy_core's pytest plugin with every
    ONNX node test case of an op the platform claims (every element type C carries).
    """

    plugin: ClassVar[Any] = None
    plugin_name: ClassVar[str] = "platform-under-test"
    platform: ClassVar[str] = ""

    @classmethod
    def make_host(cls) -> PluginHost:
        """An isolated host holding the plugin under test."""
        host = PluginHost()
        if cls.plugin is not None:
            load_plugin_under_test(host, cls.plugin, cls.plugin_name)
        return host

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_platform_host(cls) -> PluginHost:
        return cls.make_host()

    @pytest.fixture(scope="class")
    @classmethod
    def runtime_cache(cls, tmp_path_factory: pytest.TempPathFactory) -> Path:
        """Compiled runtime libraries shared by the class's builds."""
        return tmp_path_factory.mktemp("runtime-cache")

    @pytest.fixture(scope="class")
    @classmethod
    def node_case_judge(cls, conformance_platform_host: PluginHost, runtime_cache: Path) -> BatchJudge:
        """Every parametrised case of the class, judged in merged batches on first request (see node_batches)."""
        from deeploy_core.supported_ops import supported_operators

        ops = {row["op"] for row in supported_operators(conformance_platform_host, cls.platform)}
        return BatchJudge(node_cases(ops), cls.platform, conformance_platform_host, runtime_cache)

    def test_node_case(self, node_case: NodeCase, node_case_judge: BatchJudge) -> None:
        verdict = node_case_judge.verdict(node_case)
        if verdict.status == "skipped":
            pytest.skip(verdict.message)
        assert verdict.status == "passed", verdict.message

    def test_compilation_is_deterministic(
        self, conformance_platform_host: PluginHost, tmp_path: Path
    ) -> None:
        model_path = tmp_path / "determinism.onnx"
        onnx.save(determinism_model(), model_path)
        options = CompileOptions(platform=self.platform)
        _, first = compile_model(model_path, options, conformance_platform_host)
        _, second = compile_model(model_path, options, self.make_host())
        assert first.files == second.files
        assert first.report == second.report


def determinism_model() -> onnx.ModelProto:
    """A small network with weights, a branch and a reduction."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    weight = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "w")
    bias = numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "b")
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["g"], transB=1, name="fc"),
        helper.make_node("Relu", ["g"], ["r"], name="act"),
        helper.make_node("Add", ["r", "g"], ["s"], name="skip"),
        helper.make_node("Softmax", ["s"], ["y"], axis=-1, name="softmax"),
    ]
    graph = helper.make_graph(
        nodes, "determinism",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [weight, bias],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
