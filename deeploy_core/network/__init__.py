"""The core deployer and its products."""

from deeploy_core.network.deployer import NetworkDeployer
from deeploy_core.network.generated import GeneratedNetwork

__all__ = ["GeneratedNetwork", "NetworkDeployer"]
