"""The emulated MPS2 boards the folders' self-tests run on (``make test``), as the core's board data."""

from __future__ import annotations

from deeploy_core.plugin_api import BoardSupport
from deeploy_core.testing import MPS2_LINKER_SCRIPT, MPS2_STARTUP

from deeploy_cortex_m.cores import CoreSpec

STARTUP_SOURCE = MPS2_STARTUP
"""Vector table, FPU on, data and bss set up, semihosting exit: the core's start-up code for MPS2 boards (it runs
unchanged on the M7, whose system control registers are the same)."""
LINKER_SCRIPT = MPS2_LINKER_SCRIPT
"""4 MiB of code RAM at 0x0 and 4 MiB of data RAM at 0x20000000: the map of both MPS2 boards used here."""


def mps2_board(core: CoreSpec) -> BoardSupport:
    """The board QEMU emulates for ``core``, with newlib's semihosting (printf and the exit status reach the host)."""
    return BoardSupport(
        name=core.board,
        compiler="arm-none-eabi-gcc",
        arch_flags=core.arch_flags,
        startup_sources=(STARTUP_SOURCE,),
        linker_script=LINKER_SCRIPT,
        link_flags=("--specs=rdimon.specs", "-nostartfiles"),
        emulator=("qemu-system-arm", "-M", core.board, "-nographic", "-semihosting-config", "enable=on,target=native",
                  "-kernel"),
    )
