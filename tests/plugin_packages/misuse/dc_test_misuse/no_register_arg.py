"""A registry hook that leaves out its ``register`` argument, so it could never register anything."""

from deeploy_core import hookimpl


@hookimpl
def register_allocators():
    raise AssertionError("never called: the host must reject this hookimpl")
