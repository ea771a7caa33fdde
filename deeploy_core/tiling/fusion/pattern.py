"""A fused pattern: consecutive layers, each feeding the next one its only output.

Patterns are the tiler's unit of tiling: a layer tiled alone is a pattern of
one layer.  ``links[i]`` is the input of ``layers[i + 1]`` that reads the
output of ``layers[i]``; those *intermediate* tensors never leave the compute
level.
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.mapping import Layer


@dataclass(frozen=True)
class FusedPattern:
    """Layers in execution order and, per adjacent pair, the consumer's input index of the intermediate."""

    layers: tuple[Layer, ...]
    links: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        """The C name of the pattern's last layer: the pattern's tile loop runs where that layer runs."""
        return self.layers[-1].c_name

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(layer.c_name for layer in self.layers)

    def local_inputs(self, position: int) -> set[int]:
        """Inputs of ``layers[position]`` that its predecessor computes into the compute level."""
        return {self.links[position - 1]} if position > 0 else set()

    def local_outputs(self, position: int) -> set[int]:
        """Outputs of ``layers[position]`` that stay in the compute level (all but the last layer's)."""
        return {0} if position < len(self.layers) - 1 else set()

    def merged(self, other: FusedPattern, link: int) -> FusedPattern:
        """This pattern followed by ``other``, joined through ``other``'s first layer's input ``link``."""
        return FusedPattern(self.layers + other.layers, self.links + (link,) + other.links)

