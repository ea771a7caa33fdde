"""One layer as the tiler sees it: which output axes it may cut, what it may read in place, its CP model.

Everything here is a function of the layer, its tile constraint and the
network context (plus, for the CP model, the compute level's budget): the
tiler wrapper asks, the report and the diagnosis repeat the answers.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.mapping.tile_constraint import Extent, TileConstraint
from deeploy_core.tiling.cp_model import LayerModel, TensorTerm
from deeploy_core.tiling.home_inputs import readable_in_place
from deeploy_core.tiling.scratch_term import scratch_term


def first_output(node: gs.Node) -> gs.Tensor:
    """The node's first present output: ONNX marks absent optional outputs with an empty name, and an LSTM may
    leave out ``Y`` (its first output) and keep only ``Y_h``."""
    return next(tensor for tensor in node.outputs if tensor.name)


def tiled_axes(layer: Layer, constraint: TileConstraint, ctxt: NetworkContext) -> tuple[int, ...]:
    """The output axes the tiler may cut (none for a layer with several outputs: it runs as one tile)."""
    node = layer.node
    return tuple(constraint.tiled_axes(node, ctxt)) if len([t for t in node.outputs if t.name]) == 1 else ()


def whole_axes(layer: Layer, constraint: TileConstraint, ctxt: NetworkContext) -> dict[int, str]:
    """The output axes longer than 1 the tiler may not cut for ``layer``, each with the reason."""
    node = layer.node
    out_shape = ctxt[first_output(node).name].shape
    tiled, allowed = tiled_axes(layer, constraint, ctxt), constraint.tiled_axes(node, ctxt)
    return {axis: (constraint.whole_axis_reason(node, ctxt, axis) if axis not in allowed
                   else "the layer has several outputs, which the tiler computes in one tile")
            for axis, dim in enumerate(out_shape) if dim > 1 and axis not in tiled}


def readable_inputs(layer: Layer, constraint: TileConstraint, ctxt: NetworkContext) -> set[int]:
    """Inputs of ``layer`` it may read in place from the home level if nothing else fits
    (:mod:`deeploy_core.tiling.home_inputs`)."""
    node = layer.node
    out_shape = tuple(ctxt[first_output(node).name].shape)
    axes = tiled_axes(layer, constraint, ctxt)
    return {index for index, extents in enumerate(constraint.input_extents(node, ctxt))
            if extents is not None and node.inputs[index].name
            and readable_in_place(node.inputs[index].name, extents, ctxt, out_shape, axes)}


@dataclass(frozen=True)
class ModelBudget:
    """What every layer's CP model shares: the compute level's bytes, block alignment and buffer slots."""

    capacity: int
    alignment: int
    slots: int
    """Buffer slots of a tile that changes from tile to tile (2 with double buffering)."""
    scratch_copies: int
    """Kernel scratch reserved per layer: one copy per core on a cluster."""
    table_budget: int | None
    """The home level's size, where a table too big for the compute level is read in place."""


def layer_model(layer: Layer, constraint: TileConstraint, ctxt: NetworkContext, budget: ModelBudget) -> LayerModel:
    """The CP description of ``layer``: a term per input and output box, the kernel's scratch, the budget."""
    node = layer.node
    first = first_output(node)
    axes = tiled_axes(layer, constraint, ctxt)
    in_place = readable_inputs(layer, constraint, ctxt)
    tensors = []
    for index, extents in enumerate(constraint.input_extents(node, ctxt)):
        if extents is None:
            continue
        tensor = node.inputs[index]
        fixed = all(e.axis is None or e.axis not in axes for e in extents)
        tensors.append(TensorTerm(tensor.name, extents, ctxt[tensor.name].dtype.size, 1 if fixed else budget.slots,
                                  block=f"in{index}", readable_in_place=index in in_place))
    for out_index, tensor in enumerate([t for t in node.outputs if t.name]):
        shape = ctxt[tensor.name].shape
        extents = tuple(Extent(dim, axis if axis in axes else None) for axis, dim in enumerate(shape)) \
            if tensor is first else tuple(Extent(dim) for dim in shape)
        tensors.append(TensorTerm(tensor.name, extents, ctxt[tensor.name].dtype.size, budget.slots,
                                  block=f"out{out_index}"))
    # The kernel's scratch (:func:`~deeploy_core.tiling.scratch_term.scratch_term`): a term when it grows with the
    # tile, and a constant part in bytes.
    term, constant = scratch_term(layer, ctxt, constraint, tuple(ctxt[first.name].shape), axes, budget.alignment,
                                  budget.scratch_copies)
    if term is not None:
        tensors.append(term)
    columns = 1 + len(node.inputs) + len([t for t in node.outputs if t.name])
    return LayerModel(layer.c_name, ctxt[first.name].shape, tuple(axes), tensors, columns, budget.alignment,
                      budget.capacity, extra_bytes=constant, table_budget=budget.table_budget)
