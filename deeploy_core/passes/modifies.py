"""What a pass may change in a graph, as a set of flags.

The pipeline needs a cheap, conservative way to decide whether a result
computed earlier (typically by an analysis pass) is still valid after other
passes have run.  Tracking the exact edits is expensive and error-prone, so
every pass instead *declares* the kinds of elements it may change, and every
pass that consumes results declares which kinds of changes invalidate them.
"""

from __future__ import annotations

import enum

__all__ = ["Modifies"]


class Modifies(enum.Flag):
    """Kinds of ONNX graph elements a pass may change.

    The flags are deliberately coarse: they only have to be precise enough to
    let analyses skip recomputation when an unrelated kind of change happened.

    * ``Nothing`` -- the graph is left untouched (analysis passes).
    * ``Nodes`` -- nodes are added, removed, replaced or reordered, or a
      node's operator type or domain changes.
    * ``Edges`` -- the connectivity changes: which tensors a node consumes or
      produces, or which tensors are graph inputs and outputs.
    * ``Tensors`` -- tensors are created, removed or renamed, or the value of
      a constant (initializer) changes.
    * ``Attributes`` -- node attributes are added, removed or changed.
    * ``Shapes`` -- the (inferred or declared) shape of a tensor changes.
    * ``Types`` -- the element data type of a tensor changes.
    * ``Everything`` -- all of the above; the safe default for a pass whose
      effect is not worth describing more precisely.
    """

    Nothing = 0
    Nodes = enum.auto()
    Edges = enum.auto()
    Tensors = enum.auto()
    Attributes = enum.auto()
    Shapes = enum.auto()
    Types = enum.auto()
    Everything = Nodes | Edges | Tensors | Attributes | Shapes | Types
