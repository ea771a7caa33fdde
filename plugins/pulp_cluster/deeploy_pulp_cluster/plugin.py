"""Registers the PULP-like cluster platform and its memory hierarchy with deeploy_core."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from deeploy_core.plugin_api import (
    MemoryLevelExtension, OptionSpec, PlatformExtension, hookimpl,
)

from deeploy_pulp_cluster.defaults import DEFAULT_CORES, DEFAULT_L3_BUFFERING, L3_BUFFERINGS, LEVEL_SIZES, MAX_CORES
from deeploy_pulp_cluster.names import MEMORY_LEVEL_NAME, PLATFORM_NAME

if TYPE_CHECKING:  # the deployer imports numpy and ONNX: only when the platform is used
    from deeploy_core.plugin_api import CompileSettings, NetworkDeployer, Platform

VERSION = "0.1.0"

CORES_OPTION = OptionSpec("cores", int, DEFAULT_CORES, minimum=1, maximum=MAX_CORES,
                          help="cores that share every layer's tiles")
"""The platform's one option (``--cores`` sets it)."""

L3_BUFFERING_OPTION = OptionSpec("l3_buffering", str, DEFAULT_L3_BUFFERING, choices=L3_BUFFERINGS,
                                 help="staging buffers in L2 per streamed tensor living in L3: double overlaps the next "
                                      "tile's L3 transfer with the current tile's compute (twice the L2 staging)")
"""The memory level's option for the L3 -> L2 hop (``--l3-buffering`` sets it); ``--buffering`` is the L2 -> L1 hop's."""


def make_deployer(settings: CompileSettings, cores: int = DEFAULT_CORES) -> NetworkDeployer:
    """The deployer for the core count (option ``cores``) of this compile; the core's ``settings`` pass through."""
    from deeploy_pulp_cluster.deployer import ClusterDeployer

    return ClusterDeployer(settings, cores)


def platform_data() -> Platform:
    """The platform's data at its default sizes and cores, which the front end reads the op claims from (the ops a
    cluster claims do not depend on its sizes or core count)."""
    from deeploy_pulp_cluster.hierarchy import runtime_level_sizes
    from deeploy_pulp_cluster.platform import pulp_cluster_platform

    return pulp_cluster_platform(tuple(sorted(runtime_level_sizes(None).items())), DEFAULT_CORES)


def make_memory_level(deployer: Any, l1: int | None = None, l2: int | None = None, l3: int | None = None,
                      l3_buffering: str = DEFAULT_L3_BUFFERING) -> Any:
    """The cluster's hierarchy, resized by the options ``l1``/``l2``/``l3`` (None: the default size), with the L3
    hop's staging buffering ``l3_buffering``."""
    from deeploy_core.plugin_api import MemoryLevelDeployerWrapper

    from deeploy_pulp_cluster.hierarchy import cluster_hierarchy

    # Only a double-buffered L3 hop needs the level: a --memory-hierarchy file without L3 keeps the default.
    return MemoryLevelDeployerWrapper(deployer, cluster_hierarchy(), {"L1": l1, "L2": l2, "L3": l3},
                                      {"L3": l3_buffering} if l3_buffering != DEFAULT_L3_BUFFERING else {})


@hookimpl
def register_platforms(register: Callable[[PlatformExtension], None]) -> None:
    register(PlatformExtension(
        name=PLATFORM_NAME, factory=make_deployer, platform_data=platform_data, version=VERSION,
        memory_level=MEMORY_LEVEL_NAME,
        options=(CORES_OPTION,),
        description="PULP-like cluster: L3/L2/L1, cluster DMA, 8 cores; validated on a host emulation runtime"))


@hookimpl
def register_memory_levels(register: Callable[[MemoryLevelExtension], None]) -> None:
    register(MemoryLevelExtension(
        name=MEMORY_LEVEL_NAME, factory=make_memory_level, version=VERSION, platforms=(PLATFORM_NAME,),
        level_sizes=LEVEL_SIZES, options=(L3_BUFFERING_OPTION,),
        description="L3 64 MiB ↔ L2 512 KiB ↔ L1 64 KiB; tensors in L2 (in L3 when L2 cannot hold them), kernels "
                    "read L1 tiles"))
