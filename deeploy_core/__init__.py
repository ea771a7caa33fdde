"""deeploy_core: a plugin-based compiler from ONNX networks to C for small devices.

The public names a plugin author needs are importable from here.
"""

from typing import Any

_HOMES = {
    "Deployer": "deeploy_core.deployer",
    "DeployerWrapper": "deeploy_core.deployer",
    "DeeployError": "deeploy_core.errors",
    "PluginError": "deeploy_core.errors",
    "AllocatorExtension": "deeploy_core.extensions",
    "CodeTransformationExtension": "deeploy_core.extensions",
    "Extension": "deeploy_core.extensions",
    "MemoryLevelExtension": "deeploy_core.extensions",
    "OperatorExtension": "deeploy_core.extensions",
    "PlatformExtension": "deeploy_core.extensions",
    "TilerExtension": "deeploy_core.extensions",
    "TransformationPoint": "deeploy_core.extensions",
    "hookimpl": "deeploy_core.hookspecs",
    "PluginHost": "deeploy_core.plugins",
    "PluginSelection": "deeploy_core.plugins",
}
"""Where each public name lives: imported on first use, so that ``import deeploy_core.x`` (the command line's
start, a plugin's entry point) costs only what ``x`` needs."""


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "AllocatorExtension",
    "CodeTransformationExtension",
    "DeeployError",
    "Deployer",
    "DeployerWrapper",
    "Extension",
    "MemoryLevelExtension",
    "OperatorExtension",
    "PlatformExtension",
    "PluginError",
    "PluginHost",
    "PluginSelection",
    "TilerExtension",
    "TransformationPoint",
    "__version__",
    "hookimpl",
]
