"""Implements a hook with an argument its specification does not have."""

from deeploy_core import hookimpl


@hookimpl
def register_allocators(register, capacity):
    raise AssertionError("never called: the host must reject this hookimpl")
