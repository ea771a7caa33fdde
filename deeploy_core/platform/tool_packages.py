"""The Debian packages that provide the cross tools and emulators the board builds use, by tool name.

One table, so that every message that says what to install (``validate`` on a board, the emulated tests'
skip reasons) names the same packages; ``.ci/run`` installs them.
"""

from __future__ import annotations

DEBIAN_PACKAGES: dict[str, str] = {
    "arm-none-eabi-gcc": "gcc-arm-none-eabi and libnewlib-arm-none-eabi",
    "riscv64-unknown-elf-gcc": "gcc-riscv64-unknown-elf and picolibc-riscv64-unknown-elf",
    "qemu-system-arm": "qemu-system-arm",
    "qemu-system-riscv32": "qemu-system-misc",
}
"""Tool (the command's file name) -> what to install for it."""
