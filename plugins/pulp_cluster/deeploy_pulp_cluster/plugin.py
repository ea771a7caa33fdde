"""Registers the PULP-like cluster platform and its memory hierarchy with deeploy_core."""

from __future__ import annotations

from typing import Any, Callable

from deeploy_core import MemoryLevelExtension, PlatformExtension, hookimpl
from deeploy_core.errors import DeeployError
from deeploy_core.network import NetworkDeployer

from deeploy_pulp_cluster.names import MEMORY_LEVEL_NAME, PLATFORM_NAME

VERSION = "0.1.0"
MAX_CORES = 16
"""The emulator's limit (PULP_MAX_CORES in pulp_hal.h)."""


def make_deployer(**options: Any) -> NetworkDeployer:
    """The deployer for the level sizes (``level_sizes``) and core count (``cores``) of this compile."""
    from deeploy_core.memory import load_hierarchy

    from deeploy_pulp_cluster.deployer import ClusterDeployer
    from deeploy_pulp_cluster.hierarchy import level_sizes
    from deeploy_pulp_cluster.platform import DEFAULT_CORES, pulp_cluster_platform

    hierarchy_file = options.get("memory_hierarchy_file")
    sizes = level_sizes(options.get("level_sizes"), load_hierarchy(hierarchy_file) if hierarchy_file else None)
    cores = options.pop("cores", None)
    cores = DEFAULT_CORES if cores is None else int(cores)
    if not 1 <= cores <= MAX_CORES:
        raise DeeployError(f"the cluster has 1 to {MAX_CORES} cores (got --cores {cores})")
    return ClusterDeployer(pulp_cluster_platform(tuple(sorted(sizes.items())), cores), sizes, **options)


def make_memory_level(deployer: Any, **options: Any) -> Any:
    from deeploy_core.memory import MemoryLevelDeployerWrapper

    from deeploy_pulp_cluster.hierarchy import cluster_hierarchy

    return MemoryLevelDeployerWrapper(deployer, cluster_hierarchy())


@hookimpl
def register_platforms(register: Callable[[PlatformExtension], None]) -> None:
    register(PlatformExtension(
        name=PLATFORM_NAME, factory=make_deployer, version=VERSION, memory_level=MEMORY_LEVEL_NAME, max_cores=MAX_CORES,
        description="PULP-like cluster: L3/L2/L1, cluster DMA, 8 cores; validated on a host emulation runtime"))


@hookimpl
def register_memory_levels(register: Callable[[MemoryLevelExtension], None]) -> None:
    register(MemoryLevelExtension(
        name=MEMORY_LEVEL_NAME, factory=make_memory_level, version=VERSION, platforms=(PLATFORM_NAME,),
        description="L3 8 MiB ↔ L2 512 KiB ↔ L1 64 KiB; tensors in L2, kernels read L1 tiles"))
