"""A working plugin with one extension of each composable kind."""

from __future__ import annotations

from deeploy_core import (
    AllocatorExtension,
    Deployer,
    DeployerWrapper,
    MemoryLevelExtension,
    PlatformExtension,
    TilerExtension,
    hookimpl,
)
from deeploy_core.allocation import AllocationSolution


class ToyDeployer(Deployer):
    """Records the stages it ran; generates a comment naming the model."""

    platform_name = "toy"

    def frontend(self) -> None:
        self.stage_log = ["frontend"]

    def lower(self) -> None:
        self.stage_log.append("lower")

    def parse(self) -> None:
        self.stage_log.append("parse")

    def bind(self) -> None:
        self.stage_log.append("bind")

    def generate(self) -> str:
        self.stage_log.append("generate")
        return f"/* {self.compilation.model} */"


class ToyLevels(DeployerWrapper):
    def bind(self) -> None:
        self.inner.bind()
        self.unwrap().stage_log.append("annotate-levels")


class ToyTiler(DeployerWrapper):
    def __init__(self, inner: Deployer, allocator: object) -> None:
        super().__init__(inner)
        self.tiling_allocator = allocator

    def bind(self) -> None:
        self.inner.bind()
        self.unwrap().stage_log.append("tile")


class BumpAllocator:
    def solve(self, problem):
        offsets, top = {}, 0
        for block in problem.blocks:
            offsets[block.id], top = top, top + block.size
        if problem.capacity is not None and top > problem.capacity:
            return AllocationSolution(offsets=offsets, feasible=False, reason=f"needs {top} bytes")
        return AllocationSolution(offsets=offsets)


@hookimpl
def register_platforms(register):
    register(PlatformExtension(name="toy", factory=ToyDeployer, description="a platform for tests", version="1.2.0"))


@hookimpl
def register_memory_levels(register):
    register(MemoryLevelExtension(name="toy-levels", factory=ToyLevels, description="L2 only", platforms=("toy",)))


@hookimpl
def register_tilers(register):
    register(TilerExtension(name="toy-tiler", factory=ToyTiler, description="never tiles"))


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="toy-bump", factory=BumpAllocator, description="bump pointer"))
