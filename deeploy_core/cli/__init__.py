"""The ``deeploy-core`` command line.

:func:`main` routes Ctrl-C and SIGTERM to the interrupt handler before it
imports anything heavy, so an interrupt during start-up also ends in one
line and exit code 130 rather than a ``KeyboardInterrupt`` traceback.
"""

from __future__ import annotations

from typing import Any

__all__ = ["cli", "main"]


def main() -> None:
    """Console-script entry point."""
    from deeploy_core.cli.interrupts import install_interrupt_handling

    install_interrupt_handling()
    from deeploy_core.cli.app import main as run

    run()


def __getattr__(name: str) -> Any:
    if name == "cli":
        from deeploy_core.cli.app import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
