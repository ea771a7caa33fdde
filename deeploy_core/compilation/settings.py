"""The core's own settings of a compile: what every platform honours, whatever extensions are composed."""

from __future__ import annotations

from dataclasses import dataclass, field

from deeploy_core.ir import DataType


@dataclass(frozen=True)
class CompileSettings:
    """Input shapes and types, quantization, the network's name and the chosen code transformations.

    These are the options the core itself acts on (front end, lowering,
    emission); they are fixed before the first stage runs, hence frozen.
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
