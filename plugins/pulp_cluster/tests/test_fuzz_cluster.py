"""Fuzzing, fast profile: random valid graphs on the PULP cluster (8 cores, drawn L1 and buffering) against ONNX
Runtime, run on the host emulator.

A few hypothesis examples per flavour from a fixed seed (other graphs than the
generic C tests draw); ``bench/fuzz.py`` is the long profile.  Float graphs must agree within 1e-4 absolute + 1e-4 relative,
QDQ graphs bit for bit in exact mode and within one step in fixed-point mode.
"""

from __future__ import annotations

import zlib
from itertools import count
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

from deeploy_core.plugins import PluginHost
from deeploy_core.testing.fuzz.cases import FLAVOURS, GRAPHS
from deeploy_core.testing.fuzz.check import check_graph
from deeploy_core.testing.fuzz.graphs import FuzzGraph
from deeploy_core.testing.fuzz.targets import Target, pulp_cluster_targets

FAST_PROFILE = settings(max_examples=12, database=None, deadline=None,
                        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
"""Reproducible: no example database, and the seed is fixed per flavour (so the QDQ flavours draw different graphs)."""


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_random_graphs_match_onnx_runtime_on_the_cluster(flavour: str, cluster_host: PluginHost, runtime_cache: Path,
                                                         tmp_path: Path) -> None:
    examples = count()

    @seed(zlib.crc32(f"pulp-cluster {flavour}".encode()))
    @FAST_PROFILE
    @given(graph=GRAPHS[flavour](), target=pulp_cluster_targets())
    def check(graph: FuzzGraph, target: Target) -> None:
        outcome = check_graph(graph, target, cluster_host, tmp_path / f"example{next(examples)}", runtime_cache)
        assert outcome.ok, (f"{outcome.kind} at {outcome.stage} on {outcome.target.describe()}:\n"
                            f"{outcome.detail}\n{graph.describe()}")

    check()
