"""Deeploy's integer peer tests: bit-exact with their golden outputs in the raw integer domain.

Input C types follow Deeploy's rule for test data (narrowest integer type that
holds the sample's range, unsigned first; see the peer tests' MANIFEST).  The
generated code and the runtime are built with warnings as errors and run under
AddressSanitizer and UBSan: this is the untiled integer peers' only build, so
the check costs no extra compile.
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
TESTS = [test for test in find_peer_tests(ROOT) if "/FP32/" not in f"/{test.name}/"] if ROOT else []
NOT_YET: dict[str, str] = {}


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
def test_all_integer_peer_tests_are_found() -> None:
    assert len(TESTS) == 27, [test.name for test in TESTS]


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
@pytest.mark.parametrize("peer", TESTS, ids=[test.name for test in TESTS])
def test_integer_peer_test_is_bit_exact(peer, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    """Bit-exact, warning-free under -Wall -Wextra -Werror -pedantic, and clean under ASan/UBSan."""
    if peer.name in NOT_YET:
        pytest.skip(NOT_YET[peer.name])
    _, result = validate_model(
        peer.model,
        CompileOptions(platform="generic-c", input_types=peer.input_types()),
        generic_c_host,
        inputs_npz=peer.inputs,
        outputs_npz=peer.outputs,
        atol=0.0,
        cache_dir=runtime_cache,
        toolchain=Toolchain.from_environment(extra_flags=strict_flags(ADDRESS_SANITIZER_FLAGS)),
    )
    for comparison in result.comparisons:
        assert comparison.ok, f"{comparison.name}: {comparison.mismatches}/{comparison.size} elements differ"


REQUANT_CHAINS = [test for test in TESTS if test.name in (
    "Kernels/Integer/Conv/DW_2D_RQ", "Kernels/Integer/Conv/Regular_2D_RQ", "Kernels/Integer/MatMul/Regular_RQ",
    "Models/miniMobileNet", "Models/MLPerf/KeywordSpotting", "Models/EEGFormer")]


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
@pytest.mark.parametrize("peer", REQUANT_CHAINS, ids=[test.name for test in REQUANT_CHAINS])
def test_requantised_chains_keep_no_int32_tensor_in_the_arena(peer, generic_c_host: PluginHost) -> None:
    from deeploy_core.api import compile_model
    from deeploy_core.ir.dtypes import INT32

    deployer, generated = compile_model(
        peer.model, CompileOptions(platform="generic-c", input_types=peer.input_types()), generic_c_host
    )
    ctxt, layers = deployer.compilation.ctxt, deployer.compilation.layers
    fused = [layer for layer in layers if layer.op_type.startswith("Requantized")]
    assert fused, "the chain was not fused"
    rows = {row["node"]: row for row in generated.report["layers"]}
    for layer in fused:
        requant = rows[layer.name]["requantization"]
        assert set(requant) == {"shift", "range", "mul", "add"} and requant["range"][1] > requant["range"][0]
    planned = generated.report["memory"]["buffers"]
    int32_in_arena = [entry["name"] for entry in planned if ctxt[entry["name"]].dtype == INT32]
    producers = {ctxt[name].producer for name in int32_in_arena}
    assert not producers & {layer.name for layer in fused}
    requant_inputs = {layer.input_names[0] for layer in layers if layer.op_type == "RequantShift"}
    assert not requant_inputs & set(int32_in_arena), "an int32 accumulator tensor feeds a RequantShift through the arena"


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
def test_cli_types_inputs_from_data_and_validates_exactly() -> None:
    import os
    import subprocess
    import sys

    peer = next(test for test in TESTS if test.name == "Models/miniMobileNet")
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c", "COLUMNS": "200"}
    base = [sys.executable, "-m", "deeploy_core", "validate", str(peer.model), "--inputs", str(peer.inputs),
            "--outputs", str(peer.outputs), "--atol", "0"]
    typed = subprocess.run([*base, "--input-types-from", str(peer.inputs)], capture_output=True, text=True, env=env)
    assert typed.returncode == 0, typed.stdout + typed.stderr
    assert "0/10" in typed.stdout and "ok" in typed.stdout
    explicit = subprocess.run([*base, "--input-type", "input=uint8"], capture_output=True, text=True, env=env)
    assert explicit.returncode == 0, explicit.stdout + explicit.stderr
    bad = subprocess.run([*base, "--input-type", "input=int7"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --input-type 'input=int7': unknown type")
