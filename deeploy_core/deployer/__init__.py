"""Deployers and the generic wrappers composed around them.

The names are imported on first use: :mod:`deeploy_core.compilation`, which
the deployers share, imports the progress protocol from this package, so an
eager import here would close a circle.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy names are, for type checkers
    from deeploy_core.deployer.base import Deployer
    from deeploy_core.deployer.stages import STAGES
    from deeploy_core.deployer.wrapper import DeployerWrapper

_HOMES = {
    "STAGES": "deeploy_core.deployer.stages",
    "Deployer": "deeploy_core.deployer.base",
    "DeployerWrapper": "deeploy_core.deployer.wrapper",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["STAGES", "Deployer", "DeployerWrapper"]
