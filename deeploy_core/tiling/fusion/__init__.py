"""Fused (multi-layer) tiling: chains of layers run tile by tile, their intermediate tiles kept in the compute level.

A *pattern* is a run of consecutive layers in which each layer's one output
feeds only the next layer.  Its tiles are the last layer's output tiles; each
earlier layer computes, per tile, exactly the box of its output that the next
layer reads (halos included, so neighbouring tiles recompute the overlap).
Only the pattern's outer inputs and its last output move between the home
level and the compute level.  Which chains become patterns is decided by
:class:`~deeploy_core.tiling.fusion.transformation.FuseAdjacentPatterns`, a
subgraph transformation whose ``can_be_applied`` asks the tiler's cost: the
CP-SAT model of the merged pattern must fit the compute level and the merged
pattern must move fewer bytes than its parts.
"""
