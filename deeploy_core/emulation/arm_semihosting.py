"""The host's side of Arm semihosting, as much of it as the emulated Cortex-M4 programs use.

The programs :mod:`~deeploy_core.testing.emulated_targets` builds print and
exit through semihosting (``BKPT 0xAB``, operation in r0, argument block at
r1): the start-up code calls ``SYS_WRITE0`` and ``SYS_EXIT_EXTENDED``, and
newlib's librdimon opens the ``:tt`` console and ``:semihosting-features``
and writes, seeks and closes them.  Under QEMU the emulator answers; under
the instruction counter (:mod:`~deeploy_core.emulation.instruction_counting`)
this class does, the same way QEMU 7.2 does, so a program prints the same
text and ends with the same status on both.  Operations follow Arm's
"Semihosting for AArch32 and AArch64" (version 2).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

SYS_OPEN, SYS_CLOSE, SYS_WRITEC, SYS_WRITE0, SYS_WRITE, SYS_READ = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
SYS_ISTTY, SYS_SEEK, SYS_FLEN, SYS_CLOCK, SYS_TIME, SYS_ERRNO = 0x09, 0x0A, 0x0C, 0x10, 0x11, 0x13
SYS_HEAPINFO, SYS_EXIT, SYS_EXIT_EXTENDED = 0x16, 0x18, 0x20
APPLICATION_EXIT = 0x20026
"""ADP_Stopped_ApplicationExit: the reason code of a normal exit."""

FEATURES = b"SHFB\x03"
"""``:semihosting-features``: the magic and one byte, EXIT_EXTENDED (so ``exit(3)`` reports 3) and
STDOUT_STDERR (``:tt`` opened for appending is standard error), as QEMU offers them."""

MINUS_ONE = 0xFFFFFFFF

ReadMemory = Callable[[int, int], bytes]
WriteMemory = Callable[[int, bytes], None]


class SemihostingError(Exception):
    """The program asked for an operation this host does not offer (its number is in the message)."""


@dataclass
class _Handle:
    stream: str
    """"stdin", "stdout", "stderr", or "features" (the read-only feature file)."""
    position: int = 0


@dataclass
class SemihostingHost:
    """Answers the program's semihosting calls: console text is kept per stream, an exit ends the run.

    Reads and writes of the program's memory go through the two callables, so
    the class knows nothing of the emulator.
    """

    read: ReadMemory
    write: WriteMemory
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    exit_status: int | None = None
    """None while the program runs; its exit status once it called SYS_EXIT or SYS_EXIT_EXTENDED."""
    _handles: dict[int, _Handle] = field(default_factory=dict)

    def _words(self, address: int, count: int) -> tuple[int, ...]:
        return struct.unpack(f"<{count}I", self.read(address, 4 * count))

    def _string(self, address: int, length: int | None = None) -> str:
        if length is None:
            data = bytearray()
            while (byte := self.read(address + len(data), 1)) != b"\0":
                data += byte
            return data.decode("utf-8", errors="replace")
        return self.read(address, length).decode("utf-8", errors="replace")

    def _print(self, stream: str, text: str) -> None:
        (self.stderr if stream == "stderr" else self.stdout).append(text)

    def call(self, operation: int, argument: int) -> int:
        """One ``BKPT 0xAB``: the value the program finds in r0 afterwards."""
        if operation == SYS_EXIT:  # AArch32: the argument is the reason itself
            self.exit_status = 0 if argument == APPLICATION_EXIT else 1
            return 0
        if operation == SYS_EXIT_EXTENDED:
            reason, status = self._words(argument, 2)
            self.exit_status = status if reason == APPLICATION_EXIT else 1
            return 0
        if operation in (SYS_WRITEC, SYS_WRITE0):
            self._print("stdout", self._string(argument, 1 if operation == SYS_WRITEC else None))
            return 0
        if operation == SYS_OPEN:
            return self._open(*self._words(argument, 3))
        if operation in (SYS_ERRNO, SYS_CLOCK, SYS_TIME):
            return 0  # no host errors; a deterministic clock that stands still
        if operation == SYS_HEAPINFO:  # zeros: "use the linker script's values" (the start-up code never asks)
            self.write(self._words(argument, 1)[0], bytes(16))
            return 0
        handle = self._handles.get(self._words(argument, 1)[0])
        if handle is None:
            if operation in (SYS_CLOSE, SYS_WRITE, SYS_READ, SYS_ISTTY, SYS_SEEK, SYS_FLEN):
                return MINUS_ONE
            raise SemihostingError(f"semihosting operation 0x{operation:02x} is not supported by the counter")
        return self._on_handle(operation, argument, handle)

    def _open(self, name_address: int, mode: int, length: int) -> int:
        name = self._string(name_address, length)
        if name == ":tt":
            stream = "stdin" if mode < 4 else "stdout" if mode < 8 else "stderr"
        elif name == ":semihosting-features" and mode < 4:
            stream = "features"
        else:
            return MINUS_ONE  # no host files
        number = len(self._handles) + 1
        self._handles[number] = _Handle(stream)
        return number

    def _on_handle(self, operation: int, argument: int, handle: _Handle) -> int:
        if operation == SYS_WRITE:
            _, buffer, length = self._words(argument, 3)
            if handle.stream in ("stdout", "stderr"):
                self._print(handle.stream, self._string(buffer, length))
                return 0  # bytes *not* written
            return length
        if operation == SYS_READ:
            _, buffer, length = self._words(argument, 3)
            data = FEATURES[handle.position:handle.position + length] if handle.stream == "features" else b""
            self.write(buffer, data)
            handle.position += len(data)
            return length - len(data)  # bytes not read: all of them is end of file
        if operation == SYS_SEEK:
            handle.position = self._words(argument, 2)[1]
            return 0
        if operation == SYS_FLEN:
            return len(FEATURES) if handle.stream == "features" else 0
        if operation == SYS_ISTTY:
            return 0 if handle.stream == "features" else 1
        if operation == SYS_CLOSE:
            return 0
        raise SemihostingError(f"semihosting operation 0x{operation:02x} is not supported by the counter")
