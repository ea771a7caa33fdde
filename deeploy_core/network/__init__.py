"""The core deployer and its products.

The names are imported on first use, so that importing the package for one
of them does not load the whole deployer.  ``GeneratedNetwork`` lives in
:mod:`deeploy_core.codegen.generated_network`, below the compile state that
holds it.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy names are, for type checkers
    from deeploy_core.network.deployer import NetworkDeployer
    from deeploy_core.codegen.generated_network import GeneratedNetwork

_HOMES = {
    "GeneratedNetwork": "deeploy_core.codegen.generated_network",
    "NetworkDeployer": "deeploy_core.network.deployer",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["GeneratedNetwork", "NetworkDeployer"]
