"""The contracts of tiler and memory-level extensions.

``TilerConformance``: the catalogue models compile with the tiler at several
compute-level sizes, run, and match ONNX Runtime; the reported usage of the
level never exceeds its size; a size that is too small is refused with the
one-line diagnosis, and the size it names is enough; the same options give the
same code, and a solution exported in ``report.json`` reproduces it.

``MemoryLevelConformance``: the wrapper provides a consistent hierarchy, every
tensor gets a home level of that hierarchy, and level sizes can be overridden.

``TiledAllocationConformance``: every allocator places every tiling the tiler
accepts, over Deeploy's peer networks, two level sizes, fused and not.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, ClassVar

import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.memory.hierarchy import MemoryHierarchy
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.loading import load_plugin_under_test
from deeploy_core.testing.models import CONFORMANCE_MODELS
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root
from deeploy_core.tiling.errors import TilingInfeasibleError

NEEDS = re.compile(r"needs at least (\d+) bytes")


class _HostMixin:
    plugins: ClassVar[tuple[tuple[Any, str], ...]] = ()
    """``(plugin module, name)`` pairs to load: the platform and the plugin under test."""
    platform: ClassVar[str] = "generic-c"

    @classmethod
    def make_host(cls) -> PluginHost:
        host = PluginHost()
        for plugin, name in cls.plugins:
            load_plugin_under_test(host, plugin, name)
        return host

    @pytest.fixture(scope="class")
    @classmethod
    def tiling_host(cls) -> PluginHost:
        return cls.make_host()

    @pytest.fixture(scope="class")
    @classmethod
    def tiling_runtime_cache(cls, tmp_path_factory: pytest.TempPathFactory) -> Path:
        return tmp_path_factory.mktemp("tiling-runtime-cache")


def _save(name: str, directory: Path) -> Path:
    path = directory / f"{name}.onnx"
    onnx.save(CONFORMANCE_MODELS[name](), path)
    return path


class TilerConformance(_HostMixin):
    """Subclass with ``plugins``, ``tiler`` and (optionally) ``memory_level``, ``level``, ``level_sizes``."""

    tiler: ClassVar[str] = ""
    memory_level: ClassVar[str] = "l2-l1"
    level: ClassVar[str] = "L1"
    level_sizes: ClassVar[tuple[int, ...]] = (64000, 8000, 2500)

    def options(self, size: int, **extra: Any) -> CompileOptions:
        return CompileOptions(platform=self.platform, memory_level=self.memory_level, tiler=self.tiler,
                              level_sizes={self.level: size}, **extra)

    @pytest.mark.parametrize("size_index", [0, 1, 2])
    @pytest.mark.parametrize("model_name", sorted(CONFORMANCE_MODELS))
    def test_models_validate_within_the_level(self, model_name: str, size_index: int, tiling_host: PluginHost,
                                              tiling_runtime_cache: Path, tmp_path: Path) -> None:
        size = self.level_sizes[size_index]
        path = _save(model_name, tmp_path)
        try:
            generated, result = validate_model(path, self.options(size), tiling_host, atol=1e-4, rtol=1e-4,
                                               cache_dir=tiling_runtime_cache)
        except TilingInfeasibleError as error:
            match = NEEDS.search(str(error))
            assert match and "\n" not in str(error), f"the diagnosis must name the size in one line: {error}"
            size = int(match.group(1))
            generated, result = validate_model(path, self.options(size), tiling_host, atol=1e-4, rtol=1e-4,
                                               cache_dir=tiling_runtime_cache)
        assert all(c.ok for c in result.comparisons), [(c.name, c.max_abs_error) for c in result.comparisons]
        usage = generated.report["memory_levels"][self.level]
        assert usage["used"] <= size, f"{self.level} uses {usage['used']} of {size} bytes"
        assert usage["used"] >= usage["tables"]
        # Tables are copied into the level unless a layer's tiles fit only without its table (read from home then).
        home_tables = generated.report["tiling"]["solution"].get("home_tables", [])
        assert usage["tables"] > 0 or len(home_tables) == len(generated.report["tiling"]["layers"])

    def test_same_options_same_code_and_exported_solution_reproduces_it(self, tiling_host: PluginHost,
                                                                         tmp_path: Path) -> None:
        path = _save("cnn", tmp_path)
        size = self.level_sizes[1]
        _, first = compile_model(path, self.options(size), tiling_host)
        _, second = compile_model(path, self.options(size), self.make_host())
        assert first.files == second.files
        report = tmp_path / "report.json"
        report.write_text(json.dumps(first.report), encoding="utf-8")
        _, reused = compile_model(path, self.options(size, tiling_from=report), tiling_host)
        assert reused.files == first.files


class MemoryLevelConformance(_HostMixin):
    """Subclass with ``plugins`` and ``memory_level``; ``resizable`` names a level whose size can be overridden."""

    memory_level: ClassVar[str] = ""
    resizable: ClassVar[str] = "L1"

    def test_every_tensor_gets_a_home_level_of_the_hierarchy(self, tiling_host: PluginHost, tmp_path: Path) -> None:
        path = _save("cnn", tmp_path)
        deployer, _ = compile_model(path, CompileOptions(platform=self.platform, memory_level=self.memory_level),
                                    tiling_host)
        hierarchy = deployer.compilation.results[MemoryHierarchy]
        names = {level.name for level in hierarchy.levels}
        assert hierarchy.default_level in names and hierarchy.compute_level in names
        assert hierarchy.path(hierarchy.default_level, hierarchy.compute_level)[-1] == hierarchy.compute_level
        for buffer in deployer.compilation.ctxt:
            assert buffer.memory_level in names, f"{buffer.name} has home level {buffer.memory_level!r}"

    def test_level_sizes_can_be_overridden(self, tiling_host: PluginHost, tmp_path: Path) -> None:
        path = _save("mlp", tmp_path)
        options = CompileOptions(platform=self.platform, memory_level=self.memory_level,
                                 level_sizes={self.resizable: 12345})
        deployer, _ = compile_model(path, options, tiling_host)
        assert deployer.compilation.results[MemoryHierarchy].level(self.resizable).size == 12345


@functools.cache
def _peers() -> dict[str, PeerTest]:
    """Deeploy's peer networks (``../shared`` or ``$DEEPLOY_CORE_PEER_TESTS``) by name, found once; empty when absent."""
    root = peer_tests_root()
    return {peer.name: peer for peer in find_peer_tests(root)} if root is not None else {}


DEFAULT_PEERS = ("Kernels/Integer/MatMul/Regular", "Models/miniMobileNet")
"""Peers the allocator check runs on by default; the others carry the ``heavy_model`` marker (a suite that skips
that marker by default, as deeploy-core's own does, runs them with ``-m heavy_model``)."""


def _peer_params() -> list[Any]:
    names = list(_peers())
    if not names:
        return ["(no peer tests)"]
    return [pytest.param(name, marks=[] if name in DEFAULT_PEERS else [
        pytest.mark.heavy_model(reason="the allocator check on every other peer network")]) for name in names]


ALLOCATOR_REFUSAL = re.compile(r"allocator .* cannot place|try another allocator")
"""What an allocator's failure to place tiles says (as an error, or in the warning of a fused tiling given up)."""


class TiledAllocationConformance(_HostMixin):
    """Every allocator of the host places every tiling the tiler accepts (subclass with ``plugins`` and ``tiler``).

    An allocator failure after the tiler accepted a tiling is a bug of the
    tiler's model (a block it did not count, slack it did not reserve) or of
    the allocator: either way the user gets an error for a size the tiler said
    fits.  Each of Deeploy's peer networks is compiled at each of
    ``level_sizes``, fused and layer by layer, once per allocator the host
    has; a compile must succeed or fail with the tiler's own "needs at least N
    bytes" diagnosis, never with an allocator's refusal, and a fused tiling
    must never be given up because an allocator could not place it.  The
    networks come from ``../shared/peer-tests/deeploy`` (or
    ``$DEEPLOY_CORE_PEER_TESTS``); without them the tests skip.
    """

    tiler: ClassVar[str] = ""
    memory_level: ClassVar[str] = "l2-l1"
    level: ClassVar[str] = "L1"
    level_sizes: ClassVar[tuple[int, ...]] = (64000, 16000)

    @pytest.mark.parametrize("fusion", ["auto", "none"])
    @pytest.mark.parametrize("size_index", [0, 1])
    @pytest.mark.parametrize("peer_name", _peer_params())
    def test_no_allocator_refuses_a_tiling_the_tiler_accepted(self, peer_name: str, size_index: int, fusion: str,
                                                             tiling_host: PluginHost) -> None:
        if not _peers():
            pytest.skip("Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
        peer = _peers()[peer_name]
        size = self.level_sizes[size_index]
        allocators = sorted(extension.name for extension in tiling_host.extensions("allocator"))
        for allocator in allocators:
            options = CompileOptions(platform=self.platform, memory_level=self.memory_level, tiler=self.tiler,
                                     level_sizes={self.level: size}, fusion=fusion, allocator=allocator,
                                     input_types=peer.input_types())
            try:
                _, generated = compile_model(peer.model, options, tiling_host)
            except TilingInfeasibleError as error:
                assert not ALLOCATOR_REFUSAL.search(str(error)) and NEEDS.search(str(error)), (
                    f"{peer_name} at {self.level} {size}, fusion {fusion}: allocator {allocator!r} refused a tiling "
                    f"the tiler accepted: {error}")
                continue
            refusals = [w for w in generated.report["warnings"] if ALLOCATOR_REFUSAL.search(w)]
            assert not refusals, f"{peer_name} at {self.level} {size}, allocator {allocator!r}: {refusals[0]}"
            assert generated.report["memory_levels"][self.level]["used"] <= size
