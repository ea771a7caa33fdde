"""Registers the generic C platform with deeploy_core."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from deeploy_core.plugin_api import PlatformExtension, hookimpl
from deeploy_generic_c.names import PLATFORM_NAME

if TYPE_CHECKING:  # the deployer imports numpy and ONNX: only when the platform is used
    from deeploy_core.plugin_api import CompileSettings, NetworkDeployer, Platform


def make_deployer(settings: CompileSettings) -> NetworkDeployer:
    """The platform's deployer with the core's ``settings``; the platform data is built on first use (imports the op
    tables)."""
    from deeploy_core.plugin_api import NetworkDeployer
    from deeploy_generic_c.platform import generic_c_platform

    return NetworkDeployer(generic_c_platform(), settings)


def platform_data() -> Platform:
    """The platform's data (op tables, runtime), which the front end reads the op claims from."""
    from deeploy_generic_c.platform import generic_c_platform

    return generic_c_platform()


@hookimpl
def register_platforms(register: Callable[[PlatformExtension], None]) -> None:
    register(
        PlatformExtension(
            name=PLATFORM_NAME,
            factory=make_deployer,
            platform_data=platform_data,
            version="0.1.0",
            description="portable C99 for any host or microcontroller; one static arena, no malloc",
        )
    )
