"""Deployers and the generic wrappers composed around them."""

from __future__ import annotations

from typing import Union

from deeploy_core.deployer.base import Deployer
from deeploy_core.deployer.stages import STAGES
from deeploy_core.deployer.wrapper import DeployerWrapper

ComposedDeployer = Union[Deployer, DeployerWrapper]
"""What a compile runs: a platform's deployer, or the outermost wrapper composed around one."""

__all__ = ["STAGES", "ComposedDeployer", "Deployer", "DeployerWrapper"]
