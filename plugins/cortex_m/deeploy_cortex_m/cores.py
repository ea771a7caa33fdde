"""The cores this plugin targets, as data: compiler flags, CMSIS-NN's code path and the emulated board."""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_cortex_m.names import CORTEX_M4, CORTEX_M7, CORTEX_M33, CORTEX_M55


@dataclass(frozen=True)
class CoreSpec:
    """One Cortex-M core: how to compile for it, which of CMSIS-NN's paths it takes and which QEMU board emulates
    it."""

    name: str
    arch_flags: tuple[str, ...]
    board: str
    """QEMU's machine with this core (``-M``)."""
    description: str
    mve: bool = False
    """Helium (M-profile vector extension): CMSIS-NN compiles its MVE kernels (``ARM_MATH_MVEI``) instead of the
    DSP-extension ones, which reach other sources, ask for other scratch sizes and read precomputed kernel sums."""


CORES: dict[str, CoreSpec] = {
    CORTEX_M4: CoreSpec(CORTEX_M4, ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"),
                        "mps2-an386", "Arm Cortex-M4F (DSP extension: SMLAD), CMSIS-NN's DSP kernels"),
    CORTEX_M7: CoreSpec(CORTEX_M7, ("-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"),
                        "mps2-an500", "Arm Cortex-M7 (DSP extension, double-precision FPU), CMSIS-NN's DSP kernels"),
    CORTEX_M33: CoreSpec(CORTEX_M33, ("-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"),
                         "mps2-an505", "Arm Cortex-M33 (Armv8-M Mainline, DSP extension, SP FPU: RP2350, nRF5340, "
                                       "STM32U5), CMSIS-NN's DSP kernels"),
    CORTEX_M55: CoreSpec(CORTEX_M55, ("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"),
                         "mps3-an547", "Arm Cortex-M55 (Helium/MVE with floating point), CMSIS-NN's MVE kernels",
                         mve=True),
}
"""Every core this plugin registers a platform for, by platform name."""
