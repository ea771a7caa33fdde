"""Registers the Cortex-M platforms with deeploy_core."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from deeploy_core.plugin_api import OptionSpec, PlatformExtension, hookimpl

from deeploy_cortex_m.names import CMSIS_NN_VARIABLE, CORTEX_M4, CORTEX_M7, CORTEX_M33, CORTEX_M55

if TYPE_CHECKING:  # the deployer imports numpy and ONNX: only when the platform is used
    from deeploy_core.plugin_api import CompileSettings, NetworkDeployer, Platform

DEEPLOY_CORE_API = "2.1"
VERSION = "0.1.0"

CMSIS_NN_PATH_OPTION = OptionSpec(
    "cmsis_nn_path", str, "",
    help=f"your CMSIS-NN folder, written into the Makefile and CMakeLists.txt as the default of {CMSIS_NN_VARIABLE} "
         f"(empty: give {CMSIS_NN_VARIABLE} when building)")
"""The platforms' option (``--option cmsis_nn_path=PATH`` sets it)."""

DESCRIPTIONS = {
    CORTEX_M4: "Arm Cortex-M4F: int8 layers through CMSIS-NN (your copy), generic C for the rest; "
               "self-test on QEMU's mps2-an386",
    CORTEX_M7: "Arm Cortex-M7: int8 layers through CMSIS-NN (your copy), generic C for the rest; "
               "self-test on QEMU's mps2-an500",
    CORTEX_M33: "Arm Cortex-M33 (RP2350, nRF5340, STM32U5): int8 layers through CMSIS-NN (your copy), generic C "
                "for the rest; self-test on QEMU's mps2-an505",
    CORTEX_M55: "Arm Cortex-M55 (Helium): int8 layers through CMSIS-NN's MVE kernels (your copy), generic C for "
                "the rest; self-test on QEMU's mps3-an547",
}


def _checked_path(cmsis_nn_path: str) -> str:
    """The option's value, refused at compile time when it is given but holds no CMSIS-NN."""
    from pathlib import Path

    from deeploy_core.plugin_api import DeeployError

    from deeploy_cortex_m.cmsis_nn import MARKER
    from deeploy_cortex_m.names import CMSIS_NN_URL

    if cmsis_nn_path and not (Path(cmsis_nn_path) / MARKER).is_file():
        raise DeeployError(f"option cmsis_nn_path={cmsis_nn_path}: no {MARKER} there; get CMSIS-NN from {CMSIS_NN_URL}")
    return cmsis_nn_path


def _factory(core: str) -> Callable[..., NetworkDeployer]:
    def make_deployer(settings: CompileSettings, cmsis_nn_path: str = "") -> NetworkDeployer:
        """The deployer for ``core`` with the core's ``settings``; ``cmsis_nn_path`` is the build's default root."""
        from deeploy_cortex_m.deployer import CortexMDeployer
        from deeploy_cortex_m.platform import cortex_m_platform

        return CortexMDeployer(cortex_m_platform(core, _checked_path(cmsis_nn_path)), settings)

    return make_deployer


def _data(core: str) -> Callable[[], Platform]:
    def platform_data() -> Platform:
        """The platform's data, which the front end reads the op claims from."""
        from deeploy_cortex_m.platform import cortex_m_platform

        return cortex_m_platform(core)

    return platform_data


@hookimpl
def register_platforms(register: Callable[[PlatformExtension], None]) -> None:
    for core in (CORTEX_M4, CORTEX_M7, CORTEX_M33, CORTEX_M55):
        register(PlatformExtension(name=core, factory=_factory(core), platform_data=_data(core), version=VERSION,
                                   options=(CMSIS_NN_PATH_OPTION,), description=DESCRIPTIONS[core]))
