"""The emulated Arm boards the folders' self-tests run on (``make test``), as the core's board data."""

from __future__ import annotations

from pathlib import Path

from deeploy_core.plugin_api import BoardSupport
from deeploy_core.testing import MPS2_LINKER_SCRIPT, MPS2_STARTUP

from deeploy_cortex_m.cores import CoreSpec

STARTUP_SOURCE = MPS2_STARTUP
"""Vector table, FPU on, data and bss set up, semihosting exit: the core's start-up code for MPS2 boards.  It runs
unchanged on the M7, the M33 and the M55, whose system control registers (CPACR, fault status) are the M4's; on the M55,
CPACR's CP10/CP11 also enable Helium."""
MPS2_SCRIPT = MPS2_LINKER_SCRIPT
"""4 MiB of code RAM at 0x0 and 4 MiB of data RAM at 0x20000000: the map of mps2-an386 and mps2-an500."""
MPS3_AN547_SCRIPT = Path(__file__).resolve().parent / "boards" / "mps3_an547.ld"
"""The SSE-300 map of mps3-an547: vectors in ITCM, code and constants in QSPI flash, data in ISRAM."""
MPS2_AN505_SCRIPT = Path(__file__).resolve().parent / "boards" / "mps2_an505.ld"
"""The IoT Kit map of mps2-an505 through its Secure aliases: code at 0x10000000, data at 0x38000000."""
LINKER_SCRIPTS = {"mps2-an386": MPS2_SCRIPT, "mps2-an500": MPS2_SCRIPT, "mps2-an505": MPS2_AN505_SCRIPT,
                  "mps3-an547": MPS3_AN547_SCRIPT}
"""Board -> its linker script."""


def arm_board(core: CoreSpec) -> BoardSupport:
    """The board QEMU emulates for ``core``, with newlib's semihosting (printf and the exit status reach the host)."""
    return BoardSupport(
        name=core.board,
        compiler="arm-none-eabi-gcc",
        arch_flags=core.arch_flags,
        startup_sources=(STARTUP_SOURCE,),
        linker_script=LINKER_SCRIPTS[core.board],
        link_flags=("--specs=rdimon.specs", "-nostartfiles"),
        emulator=("qemu-system-arm", "-M", core.board, "-nographic", "-semihosting-config", "enable=on,target=native",
                  "-kernel"),
        # The core's Unicorn counter loads programs linked for the MPS2 map (cycle estimates from the M4's table,
        # which the M7 shares); the M33's board has another map and Unicorn has no Helium for the M55, so
        # those are counted from QEMU's own trace.
        counter="unicorn" if LINKER_SCRIPTS[core.board] == MPS2_SCRIPT else "qemu-trace",
    )
