"""Registers a descriptor that lacks a required field (the factory)."""

from deeploy_core import AllocatorExtension, hookimpl


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="factoryless"))
