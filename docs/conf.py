"""Sphinx configuration for the deeploy_core documentation site.

The build runs with warnings as errors (``-W``) in the test suite, so a broken
reference or a malformed docstring fails the tests, not a reader.
"""

from __future__ import annotations

import deeploy_core

project = "deeploy_core"
author = "the deeploy_core developers"
copyright = "2026, the deeploy_core developers"  # noqa: A001 - Sphinx's name
release = deeploy_core.__version__
version = release

extensions = ["sphinx.ext.autodoc", "sphinx.ext.viewcode"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}

exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path = ["_static"]
html_theme_options = {"description": "ONNX to C for small devices, one plugin at a time"}
