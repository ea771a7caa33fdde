"""Declares the optional C search core; everything else is in pyproject.toml.

The extension is ``optional``: without a C compiler (or if it fails to build)
the install still succeeds and the allocator runs on its pure-Python backend,
which produces the same offsets, only slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "deeploy_minimalloc._native",
            sources=["deeploy_minimalloc/_native.c"],
            optional=True,
        )
    ]
)
