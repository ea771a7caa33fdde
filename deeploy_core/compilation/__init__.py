"""The typed state of a compilation: core fields, settings, options and per-extension results."""

from deeploy_core.compilation.allocator import Allocator
from deeploy_core.compilation.code_additions import CodeAdditions
from deeploy_core.compilation.results import Results
from deeploy_core.compilation.settings import CompileSettings
from deeploy_core.compilation.state import Compilation
from deeploy_core.options.resolved import ExtensionOptions, ExtensionValues

__all__ = [
    "Allocator",
    "CodeAdditions",
    "Compilation",
    "CompileSettings",
    "ExtensionOptions",
    "ExtensionValues",
    "Results",
]
