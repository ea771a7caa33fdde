"""A registry hook that raises."""

from deeploy_core import hookimpl


@hookimpl
def register_allocators(register):
    raise RuntimeError("allocator table is corrupt")
