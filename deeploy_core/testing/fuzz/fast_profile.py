"""The fast fuzz profile the test suite runs: a dozen graphs per flavour from a fixed seed.

Shared by every platform's fuzz test so that all of them draw, check and
report the same way; ``bench/fuzz.py`` is the long profile.
"""

from __future__ import annotations

import zlib
from itertools import count
from pathlib import Path
from typing import Callable

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from deeploy_core.plugins import PluginHost
from deeploy_core.testing.fuzz.cases import GRAPHS
from deeploy_core.testing.fuzz.check import check_graph
from deeploy_core.testing.fuzz.graphs import FuzzGraph
from deeploy_core.testing.fuzz.targets import Target

FAST_PROFILE = settings(max_examples=12, database=None, deadline=None,
                        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
"""Reproducible: no example database, and the seed is fixed per flavour (so the QDQ flavours draw different graphs)."""


def check_fast_profile(flavour: str, seed_text: str, targets: Callable[[], st.SearchStrategy[Target]],
                       host: PluginHost, folder: Path, runtime_cache: Path | None) -> None:
    """Draw graphs of ``flavour`` from the seed ``seed_text`` names; fail on the first that does not match ORT.

    A clean rejection fails too: the strategies only draw combinations the platforms list.
    """
    examples = count()

    @seed(zlib.crc32(seed_text.encode()))
    @FAST_PROFILE
    @given(graph=GRAPHS[flavour](), target=targets())
    def check(graph: FuzzGraph, target: Target) -> None:
        outcome = check_graph(graph, target, host, folder / f"example{next(examples)}", runtime_cache)
        assert outcome.ok, (f"{outcome.kind} at {outcome.stage} on {outcome.target.describe()}:\n"
                            f"{outcome.detail}\n{graph.describe()}")

    check()
