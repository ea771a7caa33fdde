"""The memory-level deployer wrapper: a hierarchy for the platform and every tensor's home level.

After the wrapped deployer binds, every buffer is annotated: graph inputs and
outputs go to the hierarchy's IO level (if it names one), everything else to
its default level.  The compute level — where kernels read their tiles — is the
tiler's business.  Level sizes can be overridden per compile (``--l1``).
"""

from __future__ import annotations

from typing import ClassVar

from deeploy_core.deployer import Deployer, DeployerWrapper
from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.memory.hierarchy import MemoryHierarchy, load_hierarchy


def annotate_memory_levels(ctxt: NetworkContext, hierarchy: MemoryHierarchy) -> None:
    """IO tensors to the IO level, all other tensors to the default level."""
    io = set(ctxt.graph_inputs) | set(ctxt.graph_outputs)
    for buffer in ctxt:
        is_io = buffer.name in io or buffer.kind in (BufferKind.INPUT, BufferKind.OUTPUT)
        buffer.memory_level = hierarchy.io_level if is_io and hierarchy.io_level else hierarchy.default_level


class MemoryLevelDeployerWrapper(DeployerWrapper):
    """Gives the deployer ``memory_hierarchy`` and annotates buffers with their home level after ``bind``.

    Options read from the deployer: ``memory_hierarchy_file`` (a YAML file that
    replaces the plugin's hierarchy) and ``level_sizes`` (name → bytes).
    """

    own_attributes: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, inner: Deployer | DeployerWrapper, hierarchy: MemoryHierarchy) -> None:
        super().__init__(inner)
        options = self.options
        if options.get("memory_hierarchy_file"):
            hierarchy = load_hierarchy(options["memory_hierarchy_file"])
        sizes = {name: int(size) for name, size in (options.get("level_sizes") or {}).items() if size is not None}
        self.memory_hierarchy = hierarchy.with_sizes(sizes) if sizes else hierarchy

    def bind(self) -> None:
        self.inner.bind()
        annotate_memory_levels(self.ctxt, self.memory_hierarchy)
