"""The cores this plugin targets, as data: compiler flags and the emulated board each self-test runs on."""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_cortex_m.names import CORTEX_M4, CORTEX_M7


@dataclass(frozen=True)
class CoreSpec:
    """One Cortex-M core: how to compile for it and which QEMU board emulates it."""

    name: str
    arch_flags: tuple[str, ...]
    board: str
    """QEMU's machine with this core (``-M``); both MPS2 boards used here share the memory map of
    ``deeploy_core.testing``'s linker script (4 MiB code RAM at 0x0, 4 MiB data RAM at 0x20000000)."""
    description: str


CORES: dict[str, CoreSpec] = {
    CORTEX_M4: CoreSpec(CORTEX_M4, ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"),
                        "mps2-an386", "Arm Cortex-M4F (DSP extension: SMLAD), CMSIS-NN's DSP kernels"),
    CORTEX_M7: CoreSpec(CORTEX_M7, ("-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"),
                        "mps2-an500", "Arm Cortex-M7 (DSP extension, double-precision FPU), CMSIS-NN's DSP kernels"),
}
"""Every core this plugin registers a platform for, by platform name."""
