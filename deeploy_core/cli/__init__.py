"""The ``deeploy-core`` command line."""

from deeploy_core.cli.app import cli, main

__all__ = ["cli", "main"]
