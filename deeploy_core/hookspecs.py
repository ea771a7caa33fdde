"""The hooks a deeploy_core plugin can implement.

Every hook is a *registry hook*: the host calls it once, with a ``register``
callback, and the plugin calls ``register`` with one typed descriptor per
extension it offers.  Registering costs nothing; the descriptor's ``factory`` is
only called when a user selects the extension by name.  Plugins declare
themselves in the ``deeploy_core.plugins`` entry-point group, one group for
every kind of extension.

Each example below is a doctest: the test suite runs it.
"""

from __future__ import annotations

from typing import Callable

import pluggy

from deeploy_core.extensions import (
    AllocatorExtension,
    CodeTransformationExtension,
    MemoryLevelExtension,
    OperatorExtension,
    PlatformExtension,
    TilerExtension,
)

PROJECT_NAME = "deeploy_core"
ENTRY_POINT_GROUP = "deeploy_core.plugins"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_platforms(register: Callable[[PlatformExtension], None]) -> None:
    """Register deployment platforms (engines, op mappings, buffer kinds, default memory hierarchy).

    The factory receives the core's settings of the compile, one
    :class:`~deeploy_core.compilation.CompileSettings`, then the platform's
    own options as keywords, and returns the platform's
    :class:`~deeploy_core.deployer.Deployer` made with those settings, which
    creates the :class:`~deeploy_core.compilation.Compilation` that its stages
    fill and every wrapper around it shares.

    Example:

    >>> from deeploy_core import Deployer, PlatformExtension, PluginHost, hookimpl
    >>> from deeploy_core.compilation import CompileSettings
    >>> class EchoDeployer(Deployer):
    ...     platform_name = "echo"
    ...     def frontend(self): self.compilation.warnings.append(f"echoing {self.compilation.model}")
    ...     def lower(self): pass
    ...     def parse(self): pass
    ...     def bind(self): pass
    ...     def generate(self): return f"/* {self.compilation.model} */"
    >>> class EchoPlatformPlugin:
    ...     @hookimpl
    ...     def register_platforms(self, register):
    ...         register(PlatformExtension(name="echo", factory=EchoDeployer, description="prints the model"))
    >>> host = PluginHost()
    >>> host.add_plugin(EchoPlatformPlugin(), name="echo-platform").status.value
    'ok'
    >>> host.create("platform", "echo", CompileSettings()).deploy("tiny-net")
    '/* tiny-net */'
    """


@hookspec
def register_memory_levels(register: Callable[[MemoryLevelExtension], None]) -> None:
    """Register memory hierarchies and the policies that place tensors in their levels.

    The factory receives the platform deployer and returns a memory-level
    :class:`~deeploy_core.deployer.DeployerWrapper` around it.  A wrapper
    keeps no network state: it reads and writes the shared
    ``self.compilation``, and puts what it computes for other extensions into
    ``self.compilation.results``, keyed by type (the core's own memory level
    stores its :class:`~deeploy_core.memory.MemoryHierarchy` there).

    Example:

    >>> from deeploy_core import DeployerWrapper, MemoryLevelExtension, PluginHost, hookimpl
    >>> class EverythingInL2(DeployerWrapper):
    ...     def bind(self):
    ...         self.inner.bind()
    ...         for buffer in self.compilation.ctxt:
    ...             buffer.memory_level = "L2"
    >>> class L2OnlyPlugin:
    ...     @hookimpl
    ...     def register_memory_levels(self, register):
    ...         register(MemoryLevelExtension(name="l2-only", factory=EverythingInL2,
    ...                                       description="every tensor in L2"))
    >>> host = PluginHost()
    >>> host.add_plugin(L2OnlyPlugin(), name="l2-only").status.value
    'ok'
    >>> host.extension("memory_level", "l2-only").description
    'every tensor in L2'
    """


@hookspec
def register_tilers(register: Callable[[TilerExtension], None]) -> None:
    """Register tiling strategies (single or double buffering, search strategy, tile constraints).

    The factory receives the memory-level deployer and the selected allocator
    and returns a tiler :class:`~deeploy_core.deployer.DeployerWrapper`.  Its
    configuration (here the allocator) stays on the wrapper; the core's tiler
    puts its solution and tiles into ``compilation.results``
    (``TilingSolution``, ``TilingState``) and its tile loops into each tiled
    layer's code-transformation chain (``compilation.chain_contributions``).

    Example:

    >>> from deeploy_core import DeployerWrapper, PluginHost, TilerExtension, hookimpl
    >>> class NoTiling(DeployerWrapper):
    ...     def __init__(self, inner, allocator):
    ...         super().__init__(inner)
    ...         self.tiling_allocator = allocator
    >>> class NoTilingPlugin:
    ...     @hookimpl
    ...     def register_tilers(self, register):
    ...         register(TilerExtension(name="untiled", factory=NoTiling, version="1.0",
    ...                                 description="keeps every layer whole"))
    >>> host = PluginHost()
    >>> host.add_plugin(NoTilingPlugin(), name="no-tiling").status.value
    'ok'
    >>> host.extension("tiler", "untiled").version
    '1.0'
    """


@hookspec
def register_allocators(register: Callable[[AllocatorExtension], None]) -> None:
    """Register static memory allocators.

    The factory returns an object whose ``solve(problem)`` takes an
    :class:`~deeploy_core.allocation.AllocationProblem` (blocks with half-open
    lifetimes and sizes, plus a capacity) and returns an
    :class:`~deeploy_core.allocation.AllocationSolution` (one offset per block).
    An allocator that also implements
    :class:`~deeploy_core.allocation.TilingModelAllocator` is asked to place the
    tile buffers inside the tiler's CP-SAT model, while tile sizes are open.
    The test suite also compiles and runs a network with the example's allocator.

    Example:

    >>> from deeploy_core import AllocatorExtension, PluginHost, hookimpl
    >>> from deeploy_core.allocation import (AllocationBlock, AllocationProblem,
    ...                                      AllocationSolution, find_allocation_errors)
    >>> class StackAllocator:
    ...     def solve(self, problem):
    ...         offsets, top = {}, 0
    ...         for block in problem.blocks:
    ...             offsets[block.id], top = top, top + block.size
    ...         return AllocationSolution(offsets=offsets)
    >>> class StackPlugin:
    ...     @hookimpl
    ...     def register_allocators(self, register):
    ...         register(AllocatorExtension(name="stack", factory=StackAllocator,
    ...                                     description="never reuses memory"))
    >>> host = PluginHost()
    >>> host.add_plugin(StackPlugin(), name="stack-allocator").status.value
    'ok'
    >>> problem = AllocationProblem(blocks=(AllocationBlock("a", 0, 2, 64), AllocationBlock("b", 1, 3, 32)))
    >>> solution = host.create("allocator", "stack").solve(problem)
    >>> solution.offsets, find_allocation_errors(problem, solution)
    ({'a': 0, 'b': 64}, [])
    """


@hookspec
def register_code_transformations(register: Callable[[CodeTransformationExtension], None]) -> None:
    """Register passes that transform a layer's execution block, attached at a named point.

    A registered pass is opt-in: it runs only in compiles whose platform's
    chain includes it by name (``Platform.code_transformations``) or whose
    user names it (``--code-transformation NAME``, repeatable, or
    ``CompileOptions.code_transformations``), so installing a plugin changes
    no other compile.  Within a point
    (:class:`~deeploy_core.extensions.TransformationPoint`), selected passes run
    in the order they were selected: the platform's names first, then the
    user's.  ``report.json`` lists, per layer, every pass that ran (built-in
    ones too).  The factory returns an object with ``apply(block, ctxt)``: it
    gets the layer's :class:`~deeploy_core.codegen.execution_block.ExecutionBlock`
    and the network context and returns the block, changed or replaced.  The
    test suite also compiles, builds and runs a network with the example's pass
    selected.

    Example:

    >>> from deeploy_core import CodeTransformationExtension, PluginHost, hookimpl
    >>> class MarkLayers:
    ...     name = "mark-layers"
    ...     def apply(self, block, ctxt):
    ...         index = block.layer.index
    ...         block.wrap(f"/* layer {index} starts */", f"/* layer {index} ends */")
    ...         return block
    >>> class MarkingPlugin:
    ...     @hookimpl
    ...     def register_code_transformations(self, register):
    ...         register(CodeTransformationExtension(name="mark-layers", factory=MarkLayers,
    ...                                              point="before-closure", order=10))
    >>> host = PluginHost()
    >>> host.add_plugin(MarkingPlugin(), name="marking").status.value
    'ok'
    >>> host.extension("code_transformation", "mark-layers").point.value
    'before-closure'
    >>> from types import SimpleNamespace
    >>> from deeploy_core.codegen.execution_block import ExecutionBlock
    >>> block = ExecutionBlock(layer=SimpleNamespace(index=3), body=["relu(x, y);"])
    >>> host.create("code_transformation", "mark-layers").apply(block, ctxt=None).body
    ['/* layer 3 starts */', 'relu(x, y);', '/* layer 3 ends */']
    """


@hookspec
def register_operators(register: Callable[[OperatorExtension], None]) -> None:
    """Register support for an ONNX operator on an existing platform.

    The factory returns the op mapping (parser + typed bindings + templates)
    that the named platform adds to its table for ``op_type``.

    Example:

    >>> from deeploy_core import OperatorExtension, PluginHost, hookimpl
    >>> class HardSwishPlugin:
    ...     @hookimpl
    ...     def register_operators(self, register):
    ...         register(OperatorExtension(name="generic-c.hardswish", platform="generic-c",
    ...                                    op_type="HardSwish", factory=lambda: "HardSwish mapping"))
    >>> host = PluginHost()
    >>> host.add_plugin(HardSwishPlugin(), name="hardswish").status.value
    'ok'
    >>> [(op.platform, op.op_type) for op in host.extensions("operator")]
    [('generic-c', 'HardSwish')]
    """


HOOK_KINDS: dict[str, str] = {
    "register_platforms": PlatformExtension.kind,
    "register_memory_levels": MemoryLevelExtension.kind,
    "register_tilers": TilerExtension.kind,
    "register_allocators": AllocatorExtension.kind,
    "register_code_transformations": CodeTransformationExtension.kind,
    "register_operators": OperatorExtension.kind,
}
"""Which extension kind each hook registers, in the order the host calls them."""
