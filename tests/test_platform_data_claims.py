"""The front end reads a platform's op claims from the data its descriptor declares, never from a deployer (issue 34).

``PlatformExtension.platform_data`` is how a platform tells the front end which
ops it maps without the front end constructing deployers (a layer above it).
These tests register fake platforms whose factories count their calls: the
claims come from the declared data, a platform without data is known by name
only, and no factory runs to answer either question.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from deeploy_core.errors import DeeployError
from deeploy_core.extensions import PlatformExtension
from deeploy_core.frontend.claims import platform_claims, supporting_platforms
from deeploy_core.hookspecs import hookimpl
from deeploy_core.platform import Platform
from deeploy_core.plugins import PluginHost

pytest.importorskip("deeploy_generic_c", reason="the fake platforms borrow generic-c's platform data")

from deeploy_generic_c.platform import generic_c_platform  # noqa: E402


class FakePlatforms:
    """Registers ``with-data`` (declares generic-c's op tables) and ``without-data``; counts factory calls."""

    def __init__(self, data: Callable[[], Platform] = generic_c_platform) -> None:
        self.factory_calls = 0
        self.data = data

    def _factory(self, settings: object, **options: object) -> object:
        self.factory_calls += 1
        raise AssertionError("the front end built a deployer to learn the claims")

    @hookimpl
    def register_platforms(self, register: Callable[[PlatformExtension], None]) -> None:
        register(PlatformExtension(name="with-data", factory=self._factory, platform_data=self.data))
        register(PlatformExtension(name="without-data", factory=self._factory))


def host_with(plugin: FakePlatforms) -> PluginHost:
    host = PluginHost()
    host.add_plugin(plugin, name="fake-platforms")
    return host


def test_claims_come_from_the_declared_data_without_building_a_deployer() -> None:
    plugin = FakePlatforms()
    host = host_with(plugin)
    claims = platform_claims(host, "with-data")
    assert claims is not None and {"Relu", "Conv", "RequantizedConv"} <= claims.claimed
    assert supporting_platforms(host, "Relu") == ("with-data",)
    assert supporting_platforms(host, "NoSuchOp") == ()
    assert plugin.factory_calls == 0


def test_a_platform_without_data_is_known_by_name_only() -> None:
    plugin = FakePlatforms()
    host = host_with(plugin)
    assert platform_claims(host, "without-data") is None
    assert "without-data" not in supporting_platforms(host, "Relu")
    assert platform_claims(host, "not-installed") is None
    assert plugin.factory_calls == 0


def test_broken_platform_data_names_the_plugin_and_does_not_hide_another_refusal() -> None:
    def broken() -> Platform:
        raise KeyError("op table")

    host = host_with(FakePlatforms(data=broken))
    with pytest.raises(DeeployError, match=r"plugin 'fake-platforms' .*failed reading platform 'with-data''s data: "
                                           r"KeyError"):
        platform_claims(host, "with-data")
    assert supporting_platforms(host, "Relu") == ()


def test_platform_data_must_be_callable() -> None:
    with pytest.raises(TypeError, match="platform 'odd': platform_data must be a function without arguments"):
        PlatformExtension(name="odd", factory=dict, platform_data=generic_c_platform())  # type: ignore[arg-type]
