"""Typed options that extensions declare and the core checks, lists and records.

Only the declaration side is imported here (it is light: plugin descriptors
use it while loading); resolution lives in
:mod:`deeploy_core.options.resolution` and the resolved values in
:mod:`deeploy_core.options.resolved`.
"""

from deeploy_core.options.levels import level_option_name, level_size_options
from deeploy_core.options.spec import OptionSpec, OptionValue

__all__ = ["OptionSpec", "OptionValue", "level_option_name", "level_size_options"]
