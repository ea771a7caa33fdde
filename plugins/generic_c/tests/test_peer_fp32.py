"""Every FP32 peer test from Deeploy's suite validates against its golden outputs (≤ 1e-4 absolute)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

ROOT = peer_tests_root(Path(__file__).parent)
TESTS = find_peer_tests(ROOT, "/FP32/") if ROOT else []


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
def test_all_fp32_peer_tests_are_found() -> None:
    assert len(TESTS) >= 57, [test.name for test in TESTS]


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
@pytest.mark.parametrize("peer", TESTS, ids=[test.name for test in TESTS])
def test_fp32_peer_test_matches_golden_outputs(peer, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    _, result = validate_model(
        peer.model,
        CompileOptions(platform="generic-c"),
        generic_c_host,
        inputs_npz=peer.inputs,
        outputs_npz=peer.outputs,
        atol=1e-4,
        cache_dir=runtime_cache,
    )
    for comparison in result.comparisons:
        assert comparison.ok, f"{comparison.name}: max abs error {comparison.max_abs_error:.3g}"


STRICT_FLAGS = ("-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all")


@pytest.fixture(scope="module")
def strict_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("strict-runtime")


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
@pytest.mark.parametrize("peer", TESTS, ids=[test.name for test in TESTS])
def test_fp32_peer_code_is_warning_and_sanitizer_clean(peer, generic_c_host: PluginHost, strict_cache: Path) -> None:
    """Generated code and runtime build with -Wall -Wextra -Werror -pedantic and run clean under ASan/UBSan."""
    from deeploy_core.validate import Toolchain

    _, result = validate_model(
        peer.model, CompileOptions(platform="generic-c"), generic_c_host, inputs_npz=peer.inputs,
        outputs_npz=peer.outputs, atol=1e-4, repeats=1, cache_dir=strict_cache,
        toolchain=Toolchain.from_environment(extra_flags=STRICT_FLAGS),
    )
    assert result.ok
