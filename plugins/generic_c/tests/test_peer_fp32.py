"""Every FP32 peer test from Deeploy's suite validates against its golden outputs by validate's default rule.

The rule (:mod:`deeploy_core.tolerance`): largest error at most 1e-4 of the golden's max |value| and cosine
similarity at least 0.9999; the defaults were chosen so that every peer passes them with a wide margin.

The one build per network uses -Wall -Wextra -Werror -pedantic and runs under AddressSanitizer and UBSan: a
warning, an out-of-bounds access or undefined behaviour in the generated code or the runtime fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import ADDRESS_SANITIZER_FLAGS, strict_flags
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.validate import Toolchain

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
        cache_dir=runtime_cache,
        toolchain=Toolchain.from_environment(extra_flags=strict_flags(ADDRESS_SANITIZER_FLAGS)),
    )
    for comparison in result.comparisons:
        assert comparison.rule.kind == "scale" and comparison.ok, comparison.failure

