"""Fuzzing, fast profile: random valid graphs on the PULP cluster (8 cores, drawn L1 and buffering) against ONNX
Runtime, run on the host emulator.

A few hypothesis examples per flavour from a fixed seed (other graphs than the
generic C tests draw); ``bench/fuzz.py`` is the long profile.  Float graphs must agree within 1e-4 absolute + 1e-4 relative,
QDQ graphs bit for bit in exact mode and, in fixed-point mode, within one step where at most one layer rounds on its
own upstream (``deeploy_core.testing.fuzz.rounding``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.plugins import PluginHost
from deeploy_core.testing.fuzz.cases import FLAVOURS
from deeploy_core.testing.fuzz.fast_profile import check_fast_profile
from deeploy_core.testing.fuzz.targets import pulp_cluster_targets


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_random_graphs_match_onnx_runtime_on_the_cluster(flavour: str, cluster_host: PluginHost, runtime_cache: Path,
                                                         tmp_path: Path) -> None:
    check_fast_profile(flavour, f"pulp-cluster {flavour}", pulp_cluster_targets, cluster_host, tmp_path,
                       runtime_cache)
