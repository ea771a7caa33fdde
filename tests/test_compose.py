"""Composing deployers by name: platform deployer → memory-level wrapper → tiler wrapper."""

from __future__ import annotations

import pytest

from deeploy_core import (
    AllocatorExtension,
    Deployer,
    DeployerWrapper,
    MemoryLevelExtension,
    PlatformExtension,
    PluginHost,
    TilerExtension,
    hookimpl,
)
from deeploy_core.allocation import FirstFitAllocator
from deeploy_core.compose import DeployerChoice, compose_deployer
from deeploy_core.errors import DeeployError, PluginError


class RecordingDeployer(Deployer):
    platform_name = "rec"

    def frontend(self) -> None:
        self.log = [f"frontend({self.model})"]

    def lower(self) -> None:
        self.log.append("lower")

    def parse(self) -> None:
        self.log.append("parse")

    def bind(self) -> None:
        self.log.append("bind")

    def generate(self) -> list[str]:
        self.log.append("generate")
        return self.log

    def platform_only_helper(self) -> str:
        return f"helper sees {len(self.log)} log entries"


class LevelWrapper(DeployerWrapper):
    def bind(self) -> None:
        self.inner.bind()
        self.log.append("levels")
        self.levels = {"x": "L2"}


class TilerWrapper(DeployerWrapper):
    own_attributes = frozenset({"tiler_allocator"})

    def __init__(self, inner: Deployer, allocator: object) -> None:
        super().__init__(inner)
        self.tiler_allocator = allocator

    def bind(self) -> None:
        self.inner.bind()
        self.log.append("tile")

    def generate(self) -> list[str]:
        result = self.inner.generate()
        self.log.append("tiled-code")
        return result


class Parts:
    @hookimpl
    def register_platforms(self, register):
        register(PlatformExtension(name="rec", factory=RecordingDeployer))
        register(PlatformExtension(name="not-a-deployer", factory=lambda **options: object()))

    @hookimpl
    def register_memory_levels(self, register):
        register(MemoryLevelExtension(name="levels", factory=LevelWrapper, platforms=("rec",)))
        register(MemoryLevelExtension(name="other-platform-levels", factory=LevelWrapper, platforms=("pulp",)))
        register(MemoryLevelExtension(name="unwrapped", factory=lambda deployer: deployer))

    @hookimpl
    def register_tilers(self, register):
        register(TilerExtension(name="tiles", factory=TilerWrapper))

    @hookimpl
    def register_allocators(self, register):
        register(AllocatorExtension(name="no-solve", factory=object))


@pytest.fixture
def host() -> PluginHost:
    host = PluginHost()
    host.add_plugin(Parts(), name="parts", distribution="parts-dist", version="0.3")
    return host


def test_composition_order_and_stage_dispatch(host: PluginHost) -> None:
    deployer = compose_deployer(host, DeployerChoice(platform="rec", memory_level="levels", tiler="tiles"))
    assert [type(layer).__name__ for layer in deployer.wrapper_chain()] == ["TilerWrapper", "LevelWrapper", "RecordingDeployer"]
    log = deployer.deploy("net.onnx")
    assert log == ["frontend(net.onnx)", "lower", "parse", "bind", "levels", "tile", "generate", "tiled-code"]


def test_wrappers_delegate_generically(host: PluginHost) -> None:
    deployer = compose_deployer(host, DeployerChoice(platform="rec", memory_level="levels", tiler="tiles"))
    deployer.deploy("m")
    platform = deployer.unwrap()
    assert isinstance(platform, RecordingDeployer)
    assert deployer.levels == {"x": "L2"} and platform.levels == {"x": "L2"}, "state written by a wrapper lives in the platform deployer"
    assert deployer.platform_only_helper() == platform.platform_only_helper()
    assert "tiler_allocator" not in vars(platform), "declared own attributes stay on the wrapper"
    assert isinstance(deployer.tiler_allocator, FirstFitAllocator)
    assert deployer.find_wrapper(LevelWrapper) is deployer.inner
    assert isinstance(deployer, Deployer)


def test_allocator_is_chosen_by_name(host: PluginHost) -> None:
    deployer = compose_deployer(host, DeployerChoice(platform="rec"))
    assert isinstance(deployer.allocator, FirstFitAllocator)
    with pytest.raises(DeeployError, match="no allocator named 'best'"):
        compose_deployer(host, DeployerChoice(platform="rec", allocator="best"))
    with pytest.raises(PluginError, match=r"plugin 'parts' \(parts-dist 0.3\).*has no solve\(\)"):
        compose_deployer(host, DeployerChoice(platform="rec", allocator="no-solve"))


def test_tiler_needs_a_memory_level(host: PluginHost) -> None:
    with pytest.raises(DeeployError, match="needs a memory level"):
        compose_deployer(host, DeployerChoice(platform="rec", tiler="tiles"))


def test_memory_level_for_another_platform_is_refused(host: PluginHost) -> None:
    with pytest.raises(DeeployError, match="does not support platform 'rec'"):
        compose_deployer(host, DeployerChoice(platform="rec", memory_level="other-platform-levels"))


def test_factory_returning_the_wrong_type_is_blamed_on_the_plugin(host: PluginHost) -> None:
    with pytest.raises(PluginError, match="plugin 'parts'.*expected a Deployer"):
        compose_deployer(host, DeployerChoice(platform="not-a-deployer"))
    with pytest.raises(PluginError, match="expected a DeployerWrapper"):
        compose_deployer(host, DeployerChoice(platform="rec", memory_level="unwrapped"))


def test_wrapper_refuses_a_non_deployer() -> None:
    with pytest.raises(TypeError, match="must wrap a Deployer"):
        LevelWrapper(object())  # type: ignore[arg-type]
