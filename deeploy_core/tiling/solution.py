"""A tiling solution: the output tile size per tiled axis of every layer, serialisable as JSON.

This is what the CP-SAT model decides and what ``tile(tilingSolution=…)``
accepts back: everything else (tile boxes, kernels, transfers, tables) is
derived from it deterministically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deeploy_core.errors import DeeployError


@dataclass(frozen=True)
class LayerTiling:
    """Tile sizes of one layer's output, by axis (axes not listed are whole)."""

    layer: str
    tile: dict[int, int]

    def tile_count(self, out_shape: tuple[int, ...]) -> int:
        count = 1
        for axis, size in self.tile.items():
            count *= -(-out_shape[axis] // size)
        return count


@dataclass(frozen=True)
class PatternTiling:
    """A fused pattern: its layers (C names, in order) and the tile sizes of its last layer's output."""

    layers: tuple[str, ...]
    tile: dict[int, int]


@dataclass(frozen=True)
class TilingSolution:
    """Per layer name, its :class:`LayerTiling`; the fused patterns; plus how it was found (for reports).

    ``layers`` is the layer-wise solution of every tiled layer; a layer that
    belongs to one of ``patterns`` is tiled by its pattern instead.
    """

    layers: dict[str, LayerTiling]
    strategy: str = "max"
    buffering: str = "single"
    info: dict[str, Any] = field(default_factory=dict, compare=False)
    patterns: tuple[PatternTiling, ...] = ()
    home_tables: tuple[str, ...] = ()
    """Layers (tiled alone) whose table is read in place from the home level rather than copied into the
    compute level: their tiles fit only without it (:mod:`deeploy_core.tiling.cp_model`)."""
    home_inputs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Layers (tiled alone, never fused) that also read some whole constant inputs in place from the home level,
    with those inputs' tensor names: the layer does not fit the compute level with them."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "strategy": self.strategy,
            "buffering": self.buffering,
            "layers": {name: {str(axis): size for axis, size in sorted(tiling.tile.items())}
                       for name, tiling in sorted(self.layers.items())},
        }
        if self.home_tables:
            data["home_tables"] = sorted(self.home_tables)
        if self.home_inputs:
            data["home_inputs"] = {name: list(tensors) for name, tensors in sorted(self.home_inputs.items())}
        if self.patterns:
            data["patterns"] = [{"layers": list(p.layers), "tile": {str(a): s for a, s in sorted(p.tile.items())}}
                                for p in self.patterns]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TilingSolution:
        try:
            layers = {
                str(name): LayerTiling(str(name), {int(axis): int(size) for axis, size in tiles.items()})
                for name, tiles in data["layers"].items()
            }
            patterns = tuple(PatternTiling(tuple(str(n) for n in p["layers"]),
                                           {int(axis): int(size) for axis, size in p["tile"].items()})
                             for p in data.get("patterns", ()))
            home_tables = tuple(sorted(str(name) for name in data.get("home_tables", ())))
            home_inputs = {str(name): tuple(str(tensor) for tensor in tensors)
                           for name, tensors in dict(data.get("home_inputs", {})).items()}
            return cls(layers, str(data.get("strategy", "max")), str(data.get("buffering", "single")),
                       patterns=patterns, home_tables=home_tables, home_inputs=home_inputs)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise DeeployError(f"tiling solution is malformed ({type(error).__name__}: {error})") from None
