"""Fuzzing, fast profile: random valid graphs on generic C (untiled, or tiled into a random L1) against ONNX Runtime.

A few hypothesis examples per flavour from a fixed seed, so the run is the
same on every machine; ``bench/fuzz.py`` is the long profile (hundreds of
graphs, both platforms, counts per op).  Float graphs must agree within 1e-4
absolute + 1e-4 relative, QDQ graphs bit for bit in exact mode; in fixed-point
mode (TFLite's arithmetic) the outputs with at most one layer of its own
rounding upstream within one step (``deeploy_core.testing.fuzz.rounding``; the
others are built and run, not compared); a clean rejection fails too, since
the strategies only draw combinations the platform lists.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.plugins import PluginHost
from deeploy_core.testing.fuzz.cases import FLAVOURS
from deeploy_core.testing.fuzz.check import check_graph
from deeploy_core.testing.fuzz.fast_profile import check_fast_profile
from deeploy_core.testing.fuzz.graphs import FuzzGraph
from deeploy_core.testing.fuzz.targets import Target, generic_c_targets


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_random_graphs_match_onnx_runtime(flavour: str, generic_c_host: PluginHost, runtime_cache: Path,
                                          tmp_path: Path) -> None:
    check_fast_profile(flavour, flavour, generic_c_targets, generic_c_host, tmp_path, runtime_cache)


def small_graph() -> FuzzGraph:
    from deeploy_core.testing.fuzz.builder import GraphBuilder

    builder = GraphBuilder(seed=3)
    x = builder.input((1, 2, 4, 4))
    y = builder.node("Relu", [builder.node("Conv", [x, builder.weights((3, 2, 3, 3), 18)], kernel_shape=[3, 3])])
    return FuzzGraph(builder.model([y]), "float", 3)


def test_a_wrong_output_is_reported_as_a_mismatch(generic_c_host: PluginHost, runtime_cache: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from deeploy_core.testing.fuzz import check as check_module

    graph, target = small_graph(), Target("generic-c")
    assert check_graph(graph, target, generic_c_host, tmp_path / "right", runtime_cache).ok
    real_run = check_module.run_network

    def off_by_a_little(*args, **kwargs):
        outputs, best = real_run(*args, **kwargs)
        return [output + 1e-3 for output in outputs], best

    monkeypatch.setattr(check_module, "run_network", off_by_a_little)
    outcome = check_graph(graph, target, generic_c_host, tmp_path / "wrong", runtime_cache)
    assert (outcome.kind, outcome.stage) == ("mismatch", "compare")
    assert "12/12 differ" in outcome.detail


def test_exceptions_are_crashes_and_deeploy_errors_rejections(generic_c_host: PluginHost, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from deeploy_core.errors import DeeployError
    from deeploy_core.testing.fuzz import check as check_module

    def refuse(*args, **kwargs):
        raise DeeployError("Conv: not supported")

    def fail(*args, **kwargs):
        raise KeyError("buffer")

    monkeypatch.setattr(check_module, "compile_model", refuse)
    rejected = check_graph(small_graph(), Target("generic-c"), generic_c_host, tmp_path / "a")
    assert (rejected.kind, rejected.detail) == ("rejected", "Conv: not supported")
    monkeypatch.setattr(check_module, "compile_model", fail)
    crashed = check_graph(small_graph(), Target("generic-c"), generic_c_host, tmp_path / "b")
    assert crashed.kind == "crash" and "KeyError: 'buffer'" in crashed.detail
