"""The memory-level deployer wrapper: a hierarchy for the platform and every tensor's home level.

After the wrapped deployer binds, every buffer is annotated: graph inputs and
outputs go to the hierarchy's IO level (if it names one), everything else to
its default level.  The compute level — where kernels read their tiles — is the
tiler's business.  Level sizes can be overridden per compile: they are the
memory-level extension's options (``--l1`` sets ``l1``), which its factory
hands over by level name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from deeploy_core.deployer.base import Deployer
from deeploy_core.deployer.wrapper import DeployerWrapper
from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.memory.hierarchy import MemoryHierarchy, load_hierarchy


def annotate_memory_levels(ctxt: NetworkContext, hierarchy: MemoryHierarchy) -> None:
    """IO tensors to the IO level, all other tensors to the default level."""
    io = set(ctxt.graph_inputs) | set(ctxt.graph_outputs)
    for buffer in ctxt:
        is_io = buffer.name in io or buffer.kind in (BufferKind.INPUT, BufferKind.OUTPUT)
        buffer.memory_level = hierarchy.io_level if is_io and hierarchy.io_level else hierarchy.default_level


class MemoryLevelDeployerWrapper(DeployerWrapper):
    """Puts the compile's :class:`MemoryHierarchy` into ``compilation.results`` and annotates buffers after ``bind``.

    ``level_sizes`` (level name → bytes, None: the level's own size) come from
    the memory-level extension's options; the core's setting
    ``memory_hierarchy_file`` (a YAML file) replaces the plugin's hierarchy,
    and the sizes given then resize the file's levels.  Readers of the
    hierarchy ask for ``compilation.results[MemoryHierarchy]``.
    """

    def __init__(self, inner: Deployer | DeployerWrapper, hierarchy: MemoryHierarchy,
                 level_sizes: Mapping[str, int | None] | None = None,
                 level_buffering: Mapping[str, str | None] | None = None) -> None:
        super().__init__(inner)
        sizes = {name: size for name, size in (level_sizes or {}).items() if size is not None}
        buffering = {name: scheme for name, scheme in (level_buffering or {}).items() if scheme is not None}
        self.compilation.results[MemoryHierarchy] = self._configured(
            hierarchy, self.compilation.settings.memory_hierarchy_file, sizes, buffering)

    @staticmethod
    def _configured(hierarchy: MemoryHierarchy, hierarchy_file: Path | None, sizes: dict[str, int],
                    buffering: dict[str, str] | None = None) -> MemoryHierarchy:
        """The hierarchy this compile uses: the file's instead of the plugin's, with the sizes (and staging
        buffering of outer levels, ``level_buffering``) given."""
        if hierarchy_file is not None:
            hierarchy = load_hierarchy(hierarchy_file)
        hierarchy = hierarchy.with_sizes(sizes) if sizes else hierarchy
        return hierarchy.with_buffering(buffering) if buffering else hierarchy

    def bind(self) -> None:
        self.inner.bind()
        annotate_memory_levels(self.compilation.ctxt, self.compilation.results[MemoryHierarchy])
