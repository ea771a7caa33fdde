"""The state of one compilation, shared by the platform deployer and every wrapper around it.

Stages and wrappers used to leave their products as ad-hoc attributes on the
platform deployer (written through the wrappers' attribute delegation) and in
string-keyed dicts, so nothing said which state existed, who wrote it, or of
what type it was.  :class:`Compilation` declares it: the core's own state as
typed fields, and whatever an extension computes for the others in
:attr:`Compilation.results`, keyed by type.  The platform deployer creates the
one instance; wrappers reach it through ``self.inner`` (their ``compilation``
property) and never keep network state of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import onnx_graphsurgeon as gs

from deeploy_core.codegen.execution_block import CodeTransformation
from deeploy_core.compilation.allocator import Allocator
from deeploy_core.compilation.code_additions import CodeAdditions
from deeploy_core.compilation.results import Results
from deeploy_core.compilation.settings import CompileSettings
from deeploy_core.progress import SILENT_PROGRESS, Progress
from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.midend.memory_plan import MemoryPlan
from deeploy_core.codegen.generated_network import GeneratedNetwork
from deeploy_core.options.resolved import ExtensionOptions
from deeploy_core.platform import Platform
from deeploy_core.plugins import PluginHost


@dataclass(eq=False, slots=True)
class Compilation:
    """Everything one compile of one model knows, stage by stage.

    Its fields are slots: writing a name that is not declared here is an
    ``AttributeError``, so state cannot creep back in as ad-hoc attributes.

    Fields a stage produces start empty (an empty graph, context and layer
    list; ``None`` for the memory plan and the generated network) and are
    filled by that stage: ``frontend`` the graph, ``lower`` the lowering
    results, ``parse`` the context and layers, ``bind`` the memory plan,
    ``generate`` the generated network.
    """

    platform_name: str = ""
    """The registered name of the platform this compile targets."""
    platform: Platform | None = None
    """The platform as data (None for a deployer that does not describe its platform as data)."""
    model: str = ""
    """The model file being compiled (set by ``deploy``)."""
    settings: CompileSettings = field(default_factory=CompileSettings)
    """The core's own options: input shapes and types, quantization, name, selected code transformations, the
    hierarchy file and a tiling to reuse."""
    extension_options: ExtensionOptions = field(default_factory=ExtensionOptions)
    """The option values every selected extension was made with (``extension_options["platform"]["cores"]``),
    set by the composer; report.json records them as ``options``."""
    graph: gs.Graph = field(default_factory=gs.Graph)
    """The ONNX graph: imported by ``frontend``, rewritten by ``lower``."""
    lowering_results: dict[str, object] = field(default_factory=dict)
    """What the lowering pipeline's passes reported (pass or pipeline name → result)."""
    ctxt: NetworkContext = field(default_factory=NetworkContext)
    """Every buffer of the network (``parse``), with offsets and memory levels once bound."""
    layers: list[Layer] = field(default_factory=list)
    """One layer per node with its chosen mapper, binding and operator representation (``parse``)."""
    memory_plan: MemoryPlan | None = None
    """The activation arena's plan (``bind``)."""
    scratch_in_compute_level: bool = False
    """Set by a tiler: every layer's kernel scratch lives in the compute level, sized for its tile, so ``bind``
    gives no layer scratch in the home level's arena (a whole-layer im2col there is what made a tiled float conv
    refuse to fit L2)."""
    warnings: list[str] = field(default_factory=list)
    """Notes for the user gathered by any stage; they end up in report.json."""
    code: CodeAdditions = field(default_factory=CodeAdditions)
    """File-scope headers and definitions extensions add to Network.c."""
    chain_contributions: dict[int, list[CodeTransformation]] = field(default_factory=dict)
    """Layer index → code transformations the composed extensions add to that layer's chain (a tiler's tile
    loop); they run first, on the layer's kernel call, before any point of the chain."""
    generated: GeneratedNetwork | None = None
    """The generated files and report (``generate``)."""
    progress: Progress = SILENT_PROGRESS
    """Where the running ``deploy`` reports what it is doing; silent outside a deployment."""
    allocator: Allocator | None = None
    """The allocator selected by name; it lays out the arena (and, for a tiler, the compute level)."""
    allocator_name: str = ""
    """The registered name of :attr:`allocator`."""
    host: PluginHost | None = None
    """The plugin host the deployer was composed from (operator and code-transformation extensions)."""
    results: Results = field(default_factory=Results)
    """Typed results of extensions, keyed by type (``results[MemoryHierarchy]``, ``results[TilingSolution]``)."""

    @property
    def network_name(self) -> str:
        """The name the generated code carries: the settings' name, else the model file's stem."""
        return self.settings.network_name or Path(self.model).stem
