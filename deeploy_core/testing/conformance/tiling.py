"""The contracts of tiler and memory-level extensions.

``TilerConformance``: the catalogue models compile with the tiler at several
compute-level sizes, run, and match ONNX Runtime; the reported usage of the
level never exceeds its size; a size that is too small is refused with the
one-line diagnosis, and the size it names is enough; the same options give the
same code, and a solution exported in ``report.json`` reproduces it.

``MemoryLevelConformance``: the wrapper provides a consistent hierarchy, every
tensor gets a home level of that hierarchy, and level sizes can be overridden.
"""

from __future__ import annotations

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
from deeploy_core.tiling.wrapper import TilingInfeasibleError

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
