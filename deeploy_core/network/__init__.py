"""The core deployer and its products.

The names are imported on first use: the compilation state imports
:mod:`deeploy_core.network.generated`, and an eager import of the deployer
here would close a circle through :mod:`deeploy_core.deployer`.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy names are, for type checkers
    from deeploy_core.network.deployer import NetworkDeployer
    from deeploy_core.network.generated import GeneratedNetwork

_HOMES = {
    "GeneratedNetwork": "deeploy_core.network.generated",
    "NetworkDeployer": "deeploy_core.network.deployer",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["GeneratedNetwork", "NetworkDeployer"]
