"""What a fuzzed graph is compiled for: the platform and its memory options, drawn by hypothesis.

Generic C runs untiled or tiled into a random L1 (single or double
buffering); the PULP cluster always tiles, on 8 cores.  Fuzzed tensors are
small (a few KiB), so besides the usual 16 and 64 KiB the L1 sizes include
ones that force layers into many tiles, and the tiler is sometimes asked for
the smallest tiles instead of the largest.  An L1 too small for a graph is not a
failure: the check retries with the size the tiler's diagnosis names, which
exercises the tightest tilings.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hypothesis import strategies as st

from deeploy_core.api import CompileOptions

GENERIC_C = "generic-c"
PULP_CLUSTER = "pulp-cluster"
PLATFORMS = (GENERIC_C, PULP_CLUSTER)


@dataclass(frozen=True)
class Target:
    """A platform and the options of one compile."""

    platform: str
    level_sizes: dict[str, int] = field(default_factory=dict)
    buffering: str | None = None
    """The tiler's buffering; None on an untiled target (naming one would turn tiling on)."""
    cores: int | None = None
    tiling_strategy: str | None = None
    """The tiler's ``strategy``: ``max`` (fewest tiles), ``min`` (smallest tiles: the most tiles and DMA
    transfers) or ``random-max``; None on an untiled target (no tiler takes it)."""

    def options(self, quantization: str = "exact") -> CompileOptions:
        return CompileOptions(platform=self.platform, level_sizes=dict(self.level_sizes), buffering=self.buffering,
                              cores=self.cores, quantization=quantization, tiling_strategy=self.tiling_strategy)

    def with_l1(self, size: int) -> Target:
        return replace(self, level_sizes={**self.level_sizes, "L1": size})

    @property
    def mode(self) -> str:
        """``untiled`` or ``tiled``: the code path the compile takes."""
        return "tiled" if self.level_sizes or self.platform == PULP_CLUSTER else "untiled"

    def describe(self) -> str:
        parts = [self.platform]
        if self.level_sizes:
            parts.append(" ".join(f"{level}={size}" for level, size in sorted(self.level_sizes.items())))
            parts.append(self.buffering or "single")
        if self.tiling_strategy not in (None, "max"):
            parts.append(f"{self.tiling_strategy} tiles")
        if self.cores is not None:
            parts.append(f"{self.cores} cores")
        return ", ".join(parts)


@st.composite
def generic_c_targets(draw: st.DrawFn) -> Target:
    """Generic C, untiled half of the time, else tiled into a random L1."""
    if draw(st.booleans()):
        return Target(GENERIC_C)
    l1 = draw(st.sampled_from([65536, 16384, 2048, 512, 64]))
    return Target(GENERIC_C, {"L1": l1}, draw(st.sampled_from(["single", "double"])),
                  tiling_strategy=draw(tiling_strategies()))


@st.composite
def pulp_cluster_targets(draw: st.DrawFn) -> Target:
    """The cluster on 8 cores, single or double buffering, an L1 of 64 or 16 KiB or one that forces tiling."""
    l1 = draw(st.sampled_from([65536, 16384, 2048, 512]))
    return Target(PULP_CLUSTER, {"L1": l1}, draw(st.sampled_from(["single", "double"])), cores=8,
                  tiling_strategy=draw(tiling_strategies()))


def tiling_strategies() -> st.SearchStrategy[str]:
    """The tiler's objective: fewest tiles mostly, sometimes the most (every tile loop and table at its longest)."""
    return st.sampled_from(["max", "max", "min", "random-max"])


TARGETS = {GENERIC_C: generic_c_targets, PULP_CLUSTER: pulp_cluster_targets}
