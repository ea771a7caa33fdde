"""Registers what the core ships itself, so that it is listed and selected like plugin extensions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from deeploy_core.allocation import FirstFitAllocator
from deeploy_core.extensions import AllocatorExtension, MemoryLevelExtension, TilerExtension
from deeploy_core.hookspecs import hookimpl
from deeploy_core.options import OptionValue, level_size_options
from deeploy_core.tiling.tiler_options import BUFFERING_SLOTS, TilerOptions

if TYPE_CHECKING:
    from deeploy_core.deployer import Deployer, DeployerWrapper
    from deeploy_core.memory import MemoryHierarchy
    from deeploy_core.memory.wrapper import MemoryLevelDeployerWrapper
    from deeploy_core.tiling.wrapper import TilerDeployerWrapper

DEFAULT_ALLOCATOR = "first-fit"


@hookimpl
def register_allocators(register: Callable[[AllocatorExtension], None]) -> None:
    """The built-in allocator, used when the user names none."""
    register(
        AllocatorExtension(
            name=DEFAULT_ALLOCATOR,
            factory=FirstFitAllocator,
            description="greedy largest-first, lowest-offset placement (built in)",
        )
    )


HOST_TWO_LEVEL = "l2-l1"
BUFFERING_TILERS = {buffering: f"{buffering}-buffering" for buffering in BUFFERING_SLOTS}
"""The built-in tiler that ``--buffering`` selects, by buffering scheme: one per scheme the tiler knows."""
SINGLE_BUFFERING = BUFFERING_TILERS["single"]
DOUBLE_BUFFERING = BUFFERING_TILERS["double"]


HOST_TWO_LEVEL_SIZES: tuple[tuple[str, int | None], tuple[str, int | None]] = (("L2", None), ("L1", 64000))
"""The built-in hierarchy's levels and their default sizes in bytes (None: unbounded)."""


def host_two_level_hierarchy() -> MemoryHierarchy:
    """A large home memory (L2, unbounded unless ``--l2``) and a small compute memory (L1, 64000 B unless ``--l1``)."""
    from deeploy_core.memory import MemoryHierarchy, MemoryLevel

    (home, home_size), (compute, compute_size) = HOST_TWO_LEVEL_SIZES
    return MemoryHierarchy(
        levels=(MemoryLevel(home, (compute,), home_size), MemoryLevel(compute, (home,), compute_size)),
        default_level=home,
        compute_level=compute,
    )


def _two_level_wrapper(deployer: Deployer | DeployerWrapper, l1: int | None = None,
                       l2: int | None = None) -> MemoryLevelDeployerWrapper:
    from deeploy_core.memory.wrapper import MemoryLevelDeployerWrapper

    return MemoryLevelDeployerWrapper(deployer, host_two_level_hierarchy(), {"L1": l1, "L2": l2})


@hookimpl
def register_memory_levels(register: Callable[[MemoryLevelExtension], None]) -> None:
    """Two levels for any platform with transfer primitives: tensors live in L2, kernels read tiles from L1."""
    register(MemoryLevelExtension(name=HOST_TWO_LEVEL, factory=_two_level_wrapper,
                                  options=level_size_options(HOST_TWO_LEVEL_SIZES),
                                  description="L2 home (unbounded) + L1 compute scratch (64000 B) (built in)"))


TILER_OPTIONS = TilerOptions.option_specs()
"""The built-in tilers' options (``strategy``: ``--tiling-strategy``; ``fusion``: ``--fusion``), made from the
option fields of :class:`~deeploy_core.tiling.tiler_options.TilerOptions`, which also gives their defaults."""


def _tiler(buffering: str, name: str) -> Callable[..., TilerDeployerWrapper]:
    def make(deployer: Deployer | DeployerWrapper, allocator: object, **options: OptionValue) -> TilerDeployerWrapper:
        from deeploy_core.tiling.wrapper import TilerDeployerWrapper

        return TilerDeployerWrapper(deployer, allocator, TilerOptions.with_options(name, buffering, options))

    return make


@hookimpl
def register_tilers(register: Callable[[TilerExtension], None]) -> None:
    """Layer-wise CP-SAT tiling with one or two buffers per tile."""
    register(TilerExtension(name=SINGLE_BUFFERING, factory=_tiler("single", SINGLE_BUFFERING), buffering="single",
                            options=TILER_OPTIONS,
                            description="CP-SAT layer-wise tiling, one buffer per tile (built in)"))
    register(TilerExtension(name=DOUBLE_BUFFERING, factory=_tiler("double", DOUBLE_BUFFERING), buffering="double",
                            options=TILER_OPTIONS,
                            description="CP-SAT layer-wise tiling, next tile fetched during compute (built in)"))
