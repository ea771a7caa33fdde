"""The core's own settings of a compile: what every platform honours, whatever extensions are composed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi
from deeploy_core.ir import DataType
from deeploy_core.tiling.solution import TilingSolution


@dataclass(frozen=True)
class CompileSettings:
    """Input shapes and types, quantization, the network's name, the chosen code transformations, and the files
    the core's own memory-level and tiler wrappers take (a hierarchy, a tiling to reuse).

    These are the options the core itself acts on (front end, lowering,
    emission, the wrappers every memory level and tiler shares); they are
    fixed before the first stage runs, hence frozen.  The caller builds one
    (:func:`~deeploy_core.api.compile_model` from its ``CompileOptions``), the
    composer hands it to the platform's factory as its first argument, and the
    factory to its deployer (``NetworkDeployer(platform, settings)``): one
    object all the way, never loose keywords.  Options that belong to one
    extension (a cluster's core count, a tiler's strategy, level sizes) are
    not here: each extension declares them and receives their values
    (:class:`~deeploy_core.options.resolved.ExtensionOptions`).
    """

    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Shapes that fix dynamic graph-input dimensions (``--input-shape``), by input name."""
    input_types: dict[str, DataType] = field(default_factory=dict)
    """Element types of graph inputs (``--input-type``); an integer type switches to integer arithmetic."""
    quantization: str = "exact"
    """``exact`` keeps QDQ pairs; ``fixed-point`` lowers quantised layers to integer kernels."""
    network_name: str | None = None
    """The name the generated code and report carry (None: the model file's stem)."""
    code_transformations: tuple[str, ...] = ()
    """Installed code transformations the user selected (``--code-transformation``), in the order given."""
    memory_hierarchy_file: Path | None = None
    """A YAML hierarchy that replaces the memory level's own (``--memory-hierarchy FILE``)."""
    tiling_solution: TilingSolution | None = None
    """A solution to reuse instead of solving (``--tiling-from``), always together with :attr:`memory_map`."""
    memory_map: dict[str, dict[str, int]] | None = None
    """The compute-level offsets of every tiled layer's blocks, reused together with :attr:`tiling_solution`."""
    c_api: NetworkApi = DEFAULT_API
    """Names, arena ownership and sections of the generated C API (``--prefix``, ``--arena``, ``--*-section``)."""

    def __post_init__(self) -> None:
        # Each setting in its declared form, and copied: a caller's dict or list never aliases the frozen settings.
        object.__setattr__(self, "input_shapes", {str(name): tuple(int(extent) for extent in shape)
                                                  for name, shape in self.input_shapes.items()})
        object.__setattr__(self, "input_types", dict(self.input_types))
        object.__setattr__(self, "network_name", str(self.network_name) if self.network_name else None)
        object.__setattr__(self, "code_transformations", tuple(str(name) for name in self.code_transformations))
        if self.memory_hierarchy_file is not None:
            object.__setattr__(self, "memory_hierarchy_file", Path(self.memory_hierarchy_file))
