"""Compiling a peer network twice, in separate processes with different hash seeds, gives byte-identical files.

Each configuration runs two children of :mod:`deeploy_core.testing.determinism` at once: one with
``PYTHONHASHSEED=1``, one with ``PYTHONHASHSEED=2`` compiling the networks in reverse order; every generated file
and report.json must have the same SHA-256.  The full matrix (every network × setup × allocator, five to ten minutes
on two shared cores) is ``bench/determinism.py``; here, within CI's budget:

- every network, with the default allocator, untiled and double-buffered on generic C and double-buffered on the
  cluster (the tiled schedule with the most state: two slots per tile buffer, per-core shares);
- every setup × allocator on a few representative networks (integer and float models with requantisation,
  attention, several inputs and outputs, mixed quantise/dequantise).

The plugins are loaded in the children only (``DEEPLOY_CORE_PLUGINS`` is set for them), so these tests never
depend on the core tests' isolated host.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.testing.determinism import (
    BY_NAME,
    CONFIGURATIONS,
    ERROR_FILE,
    Comparison,
    Configuration,
    NetworkDigest,
    check_configuration,
    compare,
    describe_differences,
    missing_plugins,
)
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

ROOT = peer_tests_root(Path(__file__).parent)
PEERS = [peer.name for peer in find_peer_tests(ROOT)] if ROOT else []
MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"

EVERY_NETWORK = ("generic-c-untiled/first-fit", "generic-c-l1-16000-double/first-fit",
                 "pulp-cluster-l1-16384-double/first-fit")
REPRESENTATIVE = ("Kernels/FP32/RMSNorm/separate_ops", "Kernels/Integer/Add/MultIO", "Kernels/Mixed/Dequant",
                  "Models/EEGFormer", "Models/Transformer_DeepQuant", "Models/miniMobileNet")
"""Cheap to compile in every configuration (well under a second each), yet they reach every allocator through
arenas and tile buffers of many layers."""
ON_REPRESENTATIVE = tuple(c for c in CONFIGURATIONS if c.name not in EVERY_NETWORK)


@pytest.fixture(scope="module")
def plugins_installed() -> None:
    missing = missing_plugins()
    if missing:
        pytest.skip(f"plugins not installed: {', '.join(missing)} (run `make test`, which installs every plugin)")


def _assert_identical(configuration: Configuration, peers: list[str]) -> None:
    assert ROOT is not None
    comparison, digests = check_configuration(configuration, ROOT, peers)
    assert not comparison.different, describe_differences(configuration, comparison)
    assert sorted(comparison.identical) == sorted(peers)
    assert all(digest.files for digest in digests)


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("name", EVERY_NETWORK)
def test_every_network_compiles_byte_identically(name: str, plugins_installed: None) -> None:
    assert len(PEERS) == 84, PEERS
    _assert_identical(BY_NAME[name], PEERS)


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("configuration", ON_REPRESENTATIVE, ids=[c.name for c in ON_REPRESENTATIVE])
def test_every_setup_and_allocator_compiles_byte_identically(configuration: Configuration,
                                                             plugins_installed: None) -> None:
    assert set(REPRESENTATIVE) <= set(PEERS)
    _assert_identical(configuration, list(REPRESENTATIVE))


def test_the_matrix_covers_every_platform_tiler_and_allocator() -> None:
    setups = {(c.setup.platform, dict(c.setup.level_sizes).get("L1"), c.setup.buffering) for c in CONFIGURATIONS}
    assert setups == {("generic-c", None, None), ("generic-c", 16000, "single"), ("generic-c", 16000, "double"),
                      ("pulp-cluster", 16384, "single"), ("pulp-cluster", 16384, "double")}
    assert {c.allocator for c in CONFIGURATIONS} == {"first-fit", "minimalloc", "tetris-coopt", "tetris-random"}
    assert len(CONFIGURATIONS) == 20 and set(EVERY_NETWORK) <= set(BY_NAME)


def test_a_difference_names_the_first_differing_file() -> None:
    first = [NetworkDigest("b", {"Network.c": "1", "report.json": "2"}), NetworkDigest("a", {"Network.c": "1"}),
             NetworkDigest("c", {ERROR_FILE: "e"})]
    second = [NetworkDigest("c", {ERROR_FILE: "e"}), NetworkDigest("a", {"Network.c": "1"}),
              NetworkDigest("b", {"Network.c": "1", "Network.h": "3", "report.json": "4"})]
    comparison = compare(first, second)
    assert comparison == Comparison(identical=["a", "c"], different={"b": "Network.h"})
    assert compare(first[:1], []).different == {"b": "(missing from the second run)"}
    assert compare([], first[:1]).different == {"b": "(missing from the first run)"}
    text = describe_differences(CONFIGURATIONS[0], comparison)
    assert text == ("generic-c-untiled/first-fit: b: Network.h differs between PYTHONHASHSEED=1 and PYTHONHASHSEED=2 "
                    "(reverse order)")


LEAKS = {
    "hash-seed": '" ".join({"alpha", "beta", "gamma", "delta"})',
    "earlier-compiles": "next(_compiled)",
}
"""Sources of nondeterminism the check must catch: set order (follows PYTHONHASHSEED) and state carried from one
compile to the next in a process (differs with the compile order)."""


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("leak", sorted(LEAKS))
def test_the_check_catches_nondeterministic_output(leak: str, plugins_installed: None, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``sitecustomize`` in the children appends a nondeterministic comment to Network.h: it must be named."""
    (tmp_path / "sitecustomize.py").write_text(
        "import itertools\n"
        "import deeploy_core.codegen.generated_network as generated\n"
        "_compiled = itertools.count()\n"
        "_write = generated.GeneratedNetwork.write\n"
        "def write(self, directory):\n"
        f"    self.files['Network.h'] += '/* ' + str({LEAKS[leak]}) + ' */\\n'\n"
        "    return _write(self, directory)\n"
        "generated.GeneratedNetwork.write = write\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert ROOT is not None
    configuration = BY_NAME["generic-c-untiled/first-fit"]
    peers = ["Kernels/Integer/Add/MultIO", "Kernels/Mixed/Dequant"]
    comparison, _ = check_configuration(configuration, ROOT, peers)
    assert comparison.different == {peer: "Network.h" for peer in peers}
    assert "Kernels/Mixed/Dequant: Network.h differs" in describe_differences(configuration, comparison)
