"""Registers the PULP-like cluster platform and its memory hierarchy with deeploy_core."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from deeploy_core.plugin_api import (
    MemoryLevelExtension, OptionSpec, PlatformExtension, hookimpl, level_size_options,
)

from deeploy_pulp_cluster.defaults import DEFAULT_CORES, LEVEL_SIZES, MAX_CORES
from deeploy_pulp_cluster.names import MEMORY_LEVEL_NAME, PLATFORM_NAME

if TYPE_CHECKING:  # the deployer imports numpy and ONNX: only when the platform is used
    from deeploy_core.plugin_api import NetworkDeployer

VERSION = "0.1.0"

CORES_OPTION = OptionSpec("cores", int, DEFAULT_CORES, minimum=1, maximum=MAX_CORES,
                          help="cores that share every layer's tiles")
"""The platform's one option (``--cores`` sets it)."""


def make_deployer(cores: int = DEFAULT_CORES, **settings: Any) -> NetworkDeployer:
    """The deployer for the core count (option ``cores``) of this compile; the core's ``settings`` pass through."""
    from deeploy_pulp_cluster.deployer import ClusterDeployer

    return ClusterDeployer(cores, **settings)


def make_memory_level(deployer: Any, l1: int | None = None, l2: int | None = None, l3: int | None = None) -> Any:
    """The cluster's hierarchy, resized by the options ``l1``/``l2``/``l3`` (None: the default size)."""
    from deeploy_core.plugin_api import MemoryLevelDeployerWrapper

    from deeploy_pulp_cluster.hierarchy import cluster_hierarchy

    return MemoryLevelDeployerWrapper(deployer, cluster_hierarchy(), {"L1": l1, "L2": l2, "L3": l3})


@hookimpl
def register_platforms(register: Callable[[PlatformExtension], None]) -> None:
    register(PlatformExtension(
        name=PLATFORM_NAME, factory=make_deployer, version=VERSION, memory_level=MEMORY_LEVEL_NAME,
        options=(CORES_OPTION,),
        description="PULP-like cluster: L3/L2/L1, cluster DMA, 8 cores; validated on a host emulation runtime"))


@hookimpl
def register_memory_levels(register: Callable[[MemoryLevelExtension], None]) -> None:
    register(MemoryLevelExtension(
        name=MEMORY_LEVEL_NAME, factory=make_memory_level, version=VERSION, platforms=(PLATFORM_NAME,),
        options=level_size_options(LEVEL_SIZES),
        description="L3 8 MiB ↔ L2 512 KiB ↔ L1 64 KiB; tensors in L2, kernels read L1 tiles"))
