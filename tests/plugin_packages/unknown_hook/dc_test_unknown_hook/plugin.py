"""Misspells a hook name: the host must say no specification knows it."""

from deeploy_core import hookimpl


@hookimpl
def register_alocators(register):
    raise AssertionError("never called")
