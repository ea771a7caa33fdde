"""Every Deeploy peer test, tiled into L1 on the generic C platform: 64000 B, 16000 B and the smallest L1 the
tiler reports feasible, with single and double buffering.

The default run keeps one configuration per network here (L1 16000, single
buffering) besides the sanitizer test's smallest L1 with double buffering;
the other five (CI's time budget) run with ``-m heavy_model``.

Float tests must match their golden outputs within the FP32 tolerance, integer tests bit for bit.  Every
compile's reported L1 usage (tile buffers + tiling tables + kernel scratch) must fit the configured L1.  Every
build uses -Wall -Wextra -Werror -pedantic; the smallest L1 with double buffering also runs under ASan/UBSan.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import ADDRESS_SANITIZER_FLAGS, WARNING_FLAGS, strict_flags
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.tiling.errors import TilingInfeasibleError
from deeploy_core.validate import Toolchain

ROOT = peer_tests_root(Path(__file__).parent)
TESTS = find_peer_tests(ROOT) if ROOT else []
MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"


def _options(peer, l1: int, buffering: str) -> CompileOptions:
    return CompileOptions(platform="generic-c", input_types=peer.input_types(),
                          level_sizes={"L1": l1}, buffering=buffering)


@functools.cache
def smallest_l1(peer, buffering: str, host: PluginHost) -> int:
    """The size named by the diagnosis of a 1-byte L1 (cached: two tests per network probe the double-buffered
    one, and each probe is a whole compile)."""
    from deeploy_core.api import compile_model

    with pytest.raises(TilingInfeasibleError) as refused:
        compile_model(peer.model, _options(peer, 1, buffering), host)
    found = re.search(r"L1 needs at least (\d+) bytes", str(refused.value))
    assert found, str(refused.value)
    return int(found.group(1))


DEFAULT_CONFIGURATION = (16000, "single")
"""The (L1, buffering) pair the default run checks for every network (the sanitizer test below adds the smallest
L1 with double buffering); the rest of the matrix is marked heavy_model."""


def _configuration(l1: int | str, buffering: str) -> object:
    marks = [] if (l1, buffering) == DEFAULT_CONFIGURATION else [
        pytest.mark.heavy_model(reason="the rest of the L1 x buffering matrix")]
    return pytest.param(l1, buffering, id=f"{l1}-{buffering}", marks=marks)


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize(("l1", "buffering"), [_configuration(l1, buffering) for l1 in (64000, 16000, "smallest")
                                               for buffering in ("single", "double")])
@pytest.mark.parametrize("peer", TESTS, ids=[test.name for test in TESTS])
def test_peer_test_runs_tiled(peer, l1, buffering: str, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    size = smallest_l1(peer, buffering, generic_c_host) if l1 == "smallest" else l1
    tolerance = (1e-4, 1e-4) if peer.is_float else (0.0, 0.0)
    generated, result = validate_model(peer.model, _options(peer, size, buffering), generic_c_host,
                                       inputs_npz=peer.inputs, outputs_npz=peer.outputs, atol=tolerance[0],
                                       rtol=tolerance[1], repeats=1, cache_dir=runtime_cache,
                                       toolchain=Toolchain.from_environment(extra_flags=WARNING_FLAGS))
    for comparison in result.comparisons:
        assert comparison.ok, (f"{comparison.name}: {comparison.mismatches}/{comparison.size} elements differ "
                               f"(max abs error {comparison.max_abs_error:.3g})")
    level = generated.report["memory_levels"]["L1"]
    assert level["capacity"] == size and level["used"] <= size, level
    layers = generated.report["tiling"]["layers"]
    assert sum(layer["level_bytes"] > 0 for layer in layers) == len(layers)


@pytest.fixture(scope="module")
def strict_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("strict-tiled-runtime")


SANITIZER_HEAVY = tuple(f"Kernels/FP32/ReduceMean/{keep}/{name}" for keep in ("KeepDims", "NoKeepDims")
                        for name in ("Add_ReduceMean", "Add_ReduceMean_Add", "ReduceMean_Add", "Axis0")) + (
    "Models/MLPerf/KeywordSpotting",)
"""Networks whose smallest L1 is a few dozen bytes (tables and constants read from L2): hundreds of thousands of
tiles, 20-35 s each under ASan; the sanitizer check on them runs with ``-m heavy_model``."""


def _sanitized(test: object) -> object:
    marks = [pytest.mark.heavy_model(reason="a smallest L1 of a few dozen bytes: 20-35 s under ASan")] \
        if getattr(test, "name", "") in SANITIZER_HEAVY else []
    return pytest.param(test, marks=marks, id=getattr(test, "name", str(test)))


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("peer", [_sanitized(test) for test in TESTS])
def test_tiled_code_is_warning_and_sanitizer_clean(peer, generic_c_host: PluginHost, strict_cache: Path) -> None:
    """The most demanding schedule (smallest L1, double buffering) under -Werror and ASan/UBSan: every tile
    transfer stays inside its tensor and its L1 slot."""
    size = smallest_l1(peer, "double", generic_c_host)
    tolerance = 1e-4 if peer.is_float else 0.0
    _, result = validate_model(peer.model, _options(peer, size, "double"), generic_c_host, inputs_npz=peer.inputs,
                               outputs_npz=peer.outputs, atol=tolerance, rtol=tolerance, repeats=1,
                               cache_dir=strict_cache,
                               toolchain=Toolchain.from_environment(extra_flags=strict_flags(ADDRESS_SANITIZER_FLAGS)))
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
