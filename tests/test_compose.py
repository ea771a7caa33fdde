"""Composing deployers by name: platform deployer → memory-level wrapper → tiler wrapper, sharing one compilation."""

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
from deeploy_core.compilation import Compilation
from deeploy_core.compose import DeployerChoice, compose_deployer
from deeploy_core.errors import DeeployError, PluginError


class Levels(dict[str, str]):
    """A typed result the level wrapper stores for the others (tensor name → level)."""


class RecordingDeployer(Deployer):
    platform_name = "rec"

    def frontend(self) -> None:
        self.log = [f"frontend({self.compilation.model})"]

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


def platform_log(wrapper: DeployerWrapper) -> list[str]:
    deployer = wrapper.unwrap()
    assert isinstance(deployer, RecordingDeployer)
    return deployer.log


class LevelWrapper(DeployerWrapper):
    def bind(self) -> None:
        self.inner.bind()
        platform_log(self).append("levels")
        self.compilation.results[Levels] = Levels(x="L2")


class TilerWrapper(DeployerWrapper):
    def __init__(self, inner: Deployer, allocator: object) -> None:
        super().__init__(inner)
        self.tiler_allocator = allocator

    def bind(self) -> None:
        self.inner.bind()
        platform_log(self).append(f"tile with levels {dict(self.compilation.results[Levels])}")

    def generate(self) -> list[str]:
        result = self.inner.generate()
        platform_log(self).append("tiled-code")
        return result


class Parts:
    @hookimpl
    def register_platforms(self, register):
        register(PlatformExtension(name="rec", factory=RecordingDeployer))
        register(PlatformExtension(name="not-a-deployer", factory=lambda settings: object()))

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
    assert log == ["frontend(net.onnx)", "lower", "parse", "bind", "levels", "tile with levels {'x': 'L2'}", "generate",
                   "tiled-code"]


def test_wrappers_share_the_platform_deployers_compilation(host: PluginHost) -> None:
    deployer = compose_deployer(host, DeployerChoice(platform="rec", memory_level="levels", tiler="tiles"))
    deployer.deploy("m")
    platform = deployer.unwrap()
    assert isinstance(platform, RecordingDeployer) and isinstance(deployer, DeployerWrapper)
    assert isinstance(deployer.compilation, Compilation)
    assert deployer.compilation is deployer.inner.compilation is platform.compilation
    assert platform.compilation.results[Levels] == {"x": "L2"}, "a wrapper's result lives in the shared compilation"
    assert platform.compilation.model == "m" and platform.compilation.platform_name == "rec"
    assert isinstance(deployer.tiler_allocator, FirstFitAllocator), "a wrapper's own configuration stays on it"
    assert "tiler_allocator" not in vars(platform)
    assert deployer.find_wrapper(LevelWrapper) is deployer.inner
    assert isinstance(deployer, Deployer)


def test_wrappers_do_not_delegate_attributes(host: PluginHost) -> None:
    """No fall-through: a wrapper neither reads nor writes the platform deployer's attributes."""
    deployer = compose_deployer(host, DeployerChoice(platform="rec", memory_level="levels", tiler="tiles"))
    deployer.deploy("m")
    platform = deployer.unwrap()
    with pytest.raises(AttributeError):
        deployer.platform_only_helper()  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        deployer.log  # type: ignore[attr-defined]  # noqa: B018
    deployer.note = "on the wrapper"  # type: ignore[attr-defined]
    assert not hasattr(platform, "note") and not hasattr(deployer.inner, "note")


def test_allocator_is_chosen_by_name(host: PluginHost) -> None:
    deployer = compose_deployer(host, DeployerChoice(platform="rec"))
    assert isinstance(deployer.compilation.allocator, FirstFitAllocator)
    assert deployer.compilation.allocator_name == "first-fit" and deployer.compilation.host is host
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
