"""What every step of tiling one compile reads: the compilation, the platform's rules and the tiler's settings.

The steps (building and solving the CP model in :mod:`.solving`, building tiles
and placing them in :mod:`.placing`) are functions of one :class:`TilerSetup`
instead of methods of the tiler wrapper, so that the wrapper only orders them
and each step can be read, and tested, on its own.  The tiler's own settings are one
:class:`~.tiler_options.TilerOptions`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deeploy_core.compilation import Compilation
from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.memory.hierarchy import MemoryHierarchy
from deeploy_core.midend.memory_plan import MemoryPlan
from deeploy_core.platform import Platform
from deeploy_core.progress import Progress
from deeploy_core.tiling.alignment import tile_alignment
from deeploy_core.tiling.constraints import tile_constraint_of
from deeploy_core.tiling.geometry import TileConstraint
from deeploy_core.tiling.parallel import ClusterParallelism
from deeploy_core.tiling.state import TilingState
from deeploy_core.tiling.tiler_options import TilerOptions


@dataclass
class TilerSetup:
    """One compile as the tiler sees it; ``tile_only`` is the one thing the steps change (see :mod:`.placing`)."""

    compilation: Compilation
    options: TilerOptions
    allocator: object
    tile_only: set[str] = field(default_factory=set)
    """Fused intermediate tensors, which the home arena does not hold (re-planned when the patterns change)."""
    _alignment: int | None = None

    @property
    def ctxt(self) -> NetworkContext:
        return self.compilation.ctxt

    @property
    def progress(self) -> Progress:
        return self.compilation.progress

    @property
    def hierarchy(self) -> MemoryHierarchy:
        """The hierarchy the memory level chose for this compile (``compilation.results[MemoryHierarchy]``)."""
        return self.compilation.results[MemoryHierarchy]

    @property
    def platform(self) -> Platform:
        """The platform data; the tiler needs its transfer primitives and tile constraints."""
        platform = self.compilation.platform
        if platform is None:
            raise DeeployError(f"tiler {self.options.name!r} needs a platform described as data "
                               f"(deeploy_core.platform.Platform), which {self.compilation.platform_name!r} lacks")
        return platform

    @property
    def state(self) -> TilingState:
        """What the steps computed so far (``compilation.results[TilingState]``)."""
        return self.compilation.results[TilingState]

    @property
    def memory_plan(self) -> MemoryPlan:
        """The home level's arena, planned by the platform deployer's ``bind``."""
        plan = self.compilation.memory_plan
        if plan is None:
            raise DeeployError("tiling needs the arena plan of bind: run the stages in order (deploy)")
        return plan

    @property
    def compute_level(self) -> str:
        return self.hierarchy.compute_level

    @property
    def home_size(self) -> int | None:
        """The size of the level tensors and tables are stored in."""
        return self.hierarchy.level(self.hierarchy.default_level).size

    @property
    def capacity(self) -> int:
        """The compute level's size in bytes."""
        size = self.hierarchy.level(self.compute_level).size
        if size is None:
            raise DeeployError(f"memory level {self.compute_level!r} has no size: give one (e.g. --l1 64000)")
        return size

    @property
    def parallelism(self) -> ClusterParallelism | None:
        """The platform's cluster, if its cores share the tiles (None: one core runs everything)."""
        parallelism: ClusterParallelism | None = self.platform.parallelism
        return parallelism

    @property
    def scratch_copies(self) -> int:
        """Scratch the model reserves per kernel: one copy per core on a cluster (an upper bound of the shares)."""
        return self.parallelism.cores if self.parallelism is not None else 1

    @property
    def tile_alignment(self) -> int:
        """Alignment of the compute level's blocks (:mod:`deeploy_core.tiling.alignment`), the same for every layer."""
        if self._alignment is None:
            self._alignment = tile_alignment(self.candidates(), self.ctxt, self.hierarchy.alignment)
        return self._alignment

    def candidates(self) -> list[Layer]:
        """Layers that run code (views cost nothing and are not tiled)."""
        return [layer for layer in self.compilation.layers if "alias_of" not in layer.representation]

    def constraint_of(self, layer: Layer) -> TileConstraint:
        """The kernel's own constraint, else the platform's policy for the op, else the core's geometry."""
        return tile_constraint_of(layer, self.platform.tile_constraints)

    def level_symbol(self) -> str:
        return f"dc_level_{self.compute_level.lower()}"

    def level_pointer(self) -> str:
        return str(self.platform.transfers.level_pointer.format(name=self.level_symbol()))
