"""The PULP-like cluster as data: the generic C kernels on the cluster, DMA transfers, memories from the HAL."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from deeploy_core.plugin_api import ALIAS_MAPPERS, ClusterParallelism, Engine, Platform, RuntimeLibrary, StaticPlacement
from deeploy_generic_c.lowering import generic_c_lowering
from deeploy_generic_c.ops import collect_mappers
from deeploy_generic_c.platform import DIALECT_SCHEMAS
from deeploy_generic_c.platform import RUNTIME_DIR as GENERIC_RUNTIME_DIR
from deeploy_generic_c.verification import VERIFICATION

from deeploy_pulp_cluster.defaults import DEFAULT_CORES
from deeploy_pulp_cluster.names import PLATFORM_NAME
from deeploy_pulp_cluster.transfers import CLUSTER_DMA

RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"


def _placement(sizes: tuple[tuple[str, int], ...], cores: int) -> StaticPlacement:
    """The arena and the constants in L2 at the HAL's base address, what L2 cannot hold in L3 at its base address;
    InitNetwork brings the cluster up first."""
    by_name = dict(sizes)
    return StaticPlacement(
        arena_declaration="",
        arena_base="pulp_l2_base()",
        constants_in_arena_level=True,
        level_bases=(("L3", "pulp_l3_base()"),),
        headers=("pulp_hal.h",),
        init_lines=(
            f"{{ static const pulp_config config = {{{by_name['L1']}u, {by_name['L2']}u, {by_name['L3']}u, {cores}u}};",
            "  if (pulp_init(&config) != 0) return; }",
        ),
    )


@lru_cache(maxsize=16)
def pulp_cluster_platform(sizes: tuple[tuple[str, int], ...], cores: int = DEFAULT_CORES) -> Platform:
    """The platform for given level sizes (sorted ``(name, bytes)`` pairs) and core count (cached per choice)."""
    mappers = dict(ALIAS_MAPPERS)
    mappers.update(collect_mappers())
    generic_sources = sorted(p for p in (GENERIC_RUNTIME_DIR / "src").glob("*.c") if p.name != "transfer.c")
    return Platform(
        name=PLATFORM_NAME,
        engines=(Engine("cluster", mappers),),
        runtime=RuntimeLibrary(
            include_dirs=(RUNTIME_DIR / "include", GENERIC_RUNTIME_DIR / "include"),
            sources=(*generic_sources, *sorted((RUNTIME_DIR / "src").glob("*.c"))),
            cflags=("-std=c99", "-O2", "-pthread"),
            ldflags=("-lm", "-pthread"),
            host_sources=(RUNTIME_DIR / "src" / "pulp_emulator.c",),
        ),
        lowering=generic_c_lowering,
        description=f"PULP-like cluster ({cores} cores, L1 {dict(sizes)['L1']} B) on the host emulation runtime",
        transfers=CLUSTER_DMA,
        custom_ops=DIALECT_SCHEMAS,
        verification=VERIFICATION,
        placement=_placement(sizes, cores),
        parallelism=ClusterParallelism(cores=cores, fork="pulp_cluster_fork({task}, NULL);", core_id="pulp_core_id()",
                                       barrier="pulp_barrier();", count_work="pulp_count_macs({macs});"),
    )
