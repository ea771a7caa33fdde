"""The memory-level deployer wrapper: a hierarchy for the platform and every tensor's home level.

After the wrapped deployer binds, every buffer is annotated: graph inputs and
outputs go to the hierarchy's IO level (if it names one), everything else to
its default level.  The compute level — where kernels read their tiles — is the
tiler's business.  Level sizes can be overridden per compile (``--l1``).
"""

from __future__ import annotations

from deeploy_core.compilation import ExtensionOptions
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

    Options it reads (:class:`~deeploy_core.compilation.ExtensionOptions`):
    ``memory_hierarchy_file`` (a YAML file that replaces the plugin's
    hierarchy) and ``level_sizes`` (name → bytes).  Readers of the hierarchy
    ask for ``compilation.results[MemoryHierarchy]``.
    """

    def __init__(self, inner: Deployer | DeployerWrapper, hierarchy: MemoryHierarchy) -> None:
        super().__init__(inner)
        self.compilation.results[MemoryHierarchy] = self._configured(hierarchy, self.compilation.extension_options)

    @staticmethod
    def _configured(hierarchy: MemoryHierarchy, options: ExtensionOptions) -> MemoryHierarchy:
        """The hierarchy this compile uses: the file's instead of the plugin's, with the sizes given."""
        if options.memory_hierarchy_file is not None:
            hierarchy = load_hierarchy(options.memory_hierarchy_file)
        return hierarchy.with_sizes(options.level_sizes) if options.level_sizes else hierarchy

    def bind(self) -> None:
        self.inner.bind()
        annotate_memory_levels(self.compilation.ctxt, self.compilation.results[MemoryHierarchy])
