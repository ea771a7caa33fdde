"""A platform that keeps the arena in a memory it hands out at run time and copies the constants into it.

This is what a multi-level SoC needs (an L2 base from the SDK, weights loaded
into L2 at start-up); the generic C kernels run unchanged on top of it.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from deeploy_core import PlatformExtension, hookimpl
from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.network import NetworkDeployer
from deeploy_core.platform import StaticPlacement
from deeploy_core.plugins import PluginHost
from deeploy_generic_c.platform import generic_c_platform

LEVEL = StaticPlacement(
    arena_declaration="static union {{ uint8_t bytes[{bytes}]; double align; }} emulated_level;",
    arena_base="level_base()",
    constants_in_arena_level=True,
    definitions=("static uint8_t *level_base(void) { return emulated_level.bytes; }",),
    init_lines=("memset(level_base(), 0xA5, sizeof emulated_level.bytes); /* poisoned until written */",),
)


class LevelPlatform:
    @hookimpl
    def register_platforms(self, register):
        platform = dataclasses.replace(generic_c_platform(), name="level-c", placement=LEVEL)
        register(PlatformExtension(name="level-c", factory=lambda settings: NetworkDeployer(platform, settings),
                                   description="generic C with the arena and constants in one run-time memory"))


@pytest.fixture(scope="module")
def tiny_cnn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "tiny.onnx"
    subprocess.run([sys.executable, str(Path(__file__).parents[3] / "examples" / "make_tiny_cnn.py"), str(path)],
                   check=True, capture_output=True)
    return path


@pytest.mark.parametrize("l1", [None, 16000])
def test_constants_copied_into_the_arena_level_give_the_same_results(tiny_cnn: Path, l1: int | None,
                                                                     runtime_cache: Path) -> None:
    host = PluginHost()
    host.add_plugin(LevelPlatform(), name="level-c")
    options = CompileOptions(platform="level-c", level_sizes={"L1": l1} if l1 else {})
    generated, result = validate_model(tiny_cnn, options, host, repeats=2, cache_dir=runtime_cache)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    source = generated.files["Network.c"]
    assert "static union { uint8_t bytes[" in source
    assert "dc_arena_view = (union dc_arena_elements *)(level_base());" in source, "tensors are seen in the level"
    pointers = [line for line in source.splitlines() if line.strip().startswith("dc_w_") and "__at = &dc_arena_view->" in line]
    assert len(pointers) >= 2, "each constant's run-time copy is read through a pointer variable of its own"
    copies = [line for line in source.splitlines() if line.strip().startswith("memcpy(DC_ARENA_BASE + ")]
    constants = generated.files["Network_weights.h"].count("extern const ")
    assert len(copies) == constants >= 2, "every constant is copied into the level once"
    assert "dc_constant_sources" in source
