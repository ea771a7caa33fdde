"""Home-level lifetimes of a fused network: a pattern keeps every tensor it touches alive while it runs.

The arena is first planned for layers run one after another: an input of a
pattern's first layer is dead once that layer has run, so a later layer's
output may be given its bytes.  A pattern runs its layers tile by tile, so
its first output tiles are stored while later tiles still read that input.
Re-planning the arena with every tensor of a pattern alive over the whole
pattern's steps keeps such pairs apart.  An intermediate tensor never
reaches the home level at all (its tiles are computed and consumed in the
compute level), so it gets no place in the arena: that is the home level's
share of what fusion saves.
"""

from __future__ import annotations

from collections.abc import Sequence

from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.midend.lifetimes import Lifetime, compute_lifetimes
from deeploy_core.tiling.fusion.pattern import FusedPattern


def intermediate_tensors(patterns: Sequence[FusedPattern]) -> set[str]:
    """The tensors the patterns keep in the compute level: every output but the last layer's."""
    return {next(t for t in layer.node.outputs if t.name).name for pattern in patterns for layer in pattern.layers[:-1]}


def fused_lifetimes(layers: list[Layer], ctxt: NetworkContext, patterns: Sequence[FusedPattern]) -> dict[str, Lifetime]:
    """The layer-by-layer lifetimes without the intermediate tensors, each other tensor a pattern's layers read or
    write stretched over the pattern."""
    lifetimes = compute_lifetimes(layers, ctxt)
    for name in intermediate_tensors(patterns):
        lifetimes.pop(name, None)
    for pattern in patterns:
        first, end = pattern.layers[0].index, pattern.layers[-1].index + 1
        for layer in pattern.layers:
            for name in {ctxt.storage_of(n).name for n in (*layer.input_names, *layer.output_names)}:
                if name in lifetimes:
                    life = lifetimes[name]
                    lifetimes[name] = Lifetime(min(life.first, first), max(life.end, end))
    return lifetimes
