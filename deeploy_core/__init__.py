"""deeploy_core: a plugin-based compiler from ONNX networks to C for small devices.

The public names a plugin author needs are importable from here.
"""

from deeploy_core.deployer import Deployer, DeployerWrapper
from deeploy_core.errors import DeeployError, PluginError
from deeploy_core.extensions import (
    AllocatorExtension,
    CodeTransformationExtension,
    Extension,
    MemoryLevelExtension,
    OperatorExtension,
    PlatformExtension,
    TilerExtension,
    TransformationPoint,
)
from deeploy_core.hookspecs import hookimpl
from deeploy_core.plugins import PluginHost, PluginSelection

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
