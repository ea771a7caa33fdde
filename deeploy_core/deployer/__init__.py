"""Deployers and the generic wrappers composed around them."""

from deeploy_core.deployer.base import Deployer
from deeploy_core.deployer.stages import STAGES
from deeploy_core.deployer.wrapper import DeployerWrapper

__all__ = ["STAGES", "Deployer", "DeployerWrapper"]
