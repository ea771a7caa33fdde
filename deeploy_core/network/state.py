"""Saving and restoring a compilation's state between stages, without pickle.

The state is split by nature: the graph as ONNX (``graph.onnx``), constant
tensors as ``constants.npz`` (read with ``allow_pickle=False``), and everything
else — buffers, layers with their chosen mapper, binding and operator
representation, the memory plan — as ``state.json``.  Restoring re-resolves
mappers and bindings by their labels in the platform's table, so a state file
can never smuggle code into the compiler.  What is saved is the core's part
of the :class:`~deeploy_core.compilation.Compilation` the stages filled; a
stage's product is saved once that stage has run (the network context and
layers after ``parse``, the memory plan after ``bind``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from deeploy_core.compilation import Compilation
from deeploy_core.errors import DeeployError
from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.ir.dtypes import from_name
from deeploy_core.mapping import Layer
from deeploy_core.midend.lifetimes import Lifetime
from deeploy_core.midend.memory_plan import MemoryPlan
from deeploy_core.platform import Platform

STATE_VERSION = 1
_JSON_SCALARS = (str, int, float, bool, type(None))


def _jsonable(value: Any) -> bool:
    if isinstance(value, _JSON_SCALARS):
        return True
    if isinstance(value, (list, tuple)):
        return all(_jsonable(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _jsonable(item) for key, item in value.items())
    return False


def _parsed(compilation: Compilation) -> bool:
    """Whether ``parse`` has run: it fills the context (every network has at least its inputs)."""
    return next(iter(compilation.ctxt), None) is not None


def export_state(compilation: Compilation, directory: Path, stage: str) -> None:
    """Write the state ``compilation`` reached after ``stage`` into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    onnx.save(gs.export_onnx(compilation.graph), directory / "graph.onnx")
    state: dict[str, Any] = {"version": STATE_VERSION, "stage": stage, "platform": compilation.platform_name,
                             "warnings": list(compilation.warnings)}
    ctxt = compilation.ctxt
    if _parsed(compilation):
        constants: dict[str, Any] = {f"c{index}": buffer.values for index, buffer in enumerate(ctxt)
                                     if buffer.values is not None}
        keys = {id(buffer.values): key for key, buffer in zip(constants, [b for b in ctxt if b.values is not None])}
        np.savez(directory / "constants.npz", **constants)
        state["graph_inputs"], state["graph_outputs"] = ctxt.graph_inputs, ctxt.graph_outputs
        state["buffers"] = [
            {
                "name": b.name, "c_name": b.c_name, "dtype": b.dtype.name, "shape": list(b.shape), "kind": b.kind.value,
                "alias_of": b.alias_of, "alias_offset": b.alias_offset, "producer": b.producer, "consumers": b.consumers, "offset": b.offset,
                "memory_level": b.memory_level, "values": keys.get(id(b.values)),
            }
            for b in ctxt
        ]
    if _parsed(compilation):
        state["layers"] = []
        for layer in compilation.layers:
            representation = {k: v for k, v in layer.representation.items() if _jsonable(v)}
            if len(representation) != len(layer.representation):
                raise DeeployError(f"layer {layer.name!r}: its operator representation is not plain data")
            state["layers"].append({
                "index": layer.index, "node": layer.name, "mapper": layer.mapper.label(),
                "binding": layer.mapper.bindings.index(layer.binding), "representation": representation,
                "c_name": layer.c_name, "transients": layer.transients,
            })
    plan = compilation.memory_plan
    if plan is not None:
        state["memory_plan"] = {
            "arena_bytes": plan.arena_bytes, "lower_bound": plan.lower_bound, "allocator": plan.allocator,
            "offsets": plan.offsets, "lifetimes": {k: [v.first, v.end] for k, v in plan.lifetimes.items()},
            "sizes": plan.sizes, "alignment": plan.alignment,
        }
    (directory / "state.json").write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def import_state(compilation: Compilation, directory: Path) -> str:
    """Restore a state written by :func:`export_state` into ``compilation``; returns the stage it was taken after.

    The compilation must be a fresh one of the same platform, e.g. a new
    platform deployer's ``compilation``.
    """
    try:
        state = json.loads((directory / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DeeployError(f"{directory}: cannot read state.json ({error})") from error
    if compilation.platform is None:
        raise DeeployError(f"{directory}: restoring a state needs a platform described as data "
                           f"({compilation.platform_name!r} is not)")
    platform = compilation.platform
    if state.get("version") != STATE_VERSION or state.get("platform") != platform.name:
        raise DeeployError(f"{directory}: state version {state.get('version')} for platform {state.get('platform')!r} does not fit")
    compilation.graph = gs.import_onnx(onnx.load(str(directory / "graph.onnx")))
    compilation.warnings = list(state.get("warnings", []))
    if "buffers" in state:
        with np.load(directory / "constants.npz", allow_pickle=False) as archive:
            constants = {key: archive[key] for key in archive.files}
        ctxt = NetworkContext(compilation.settings.c_api.mangler_prefix)  # names made after restoring keep the prefix
        for entry in state["buffers"]:
            values = constants[entry["values"]] if entry["values"] else None
            buffer = ctxt.add(entry["name"], from_name(entry["dtype"]), tuple(entry["shape"]), BufferKind(entry["kind"]),
                              values=values, alias_of=entry["alias_of"])
            buffer.c_name, buffer.producer, buffer.consumers = entry["c_name"], entry["producer"], entry["consumers"]
            buffer.offset, buffer.memory_level = entry["offset"], entry["memory_level"]
            buffer.alias_offset = int(entry.get("alias_offset", 0))
        ctxt.graph_inputs, ctxt.graph_outputs = state["graph_inputs"], state["graph_outputs"]
        compilation.ctxt = ctxt
    if "layers" in state:
        compilation.layers = _restore_layers(state["layers"], compilation.graph, platform)
    if "memory_plan" in state:
        plan = state["memory_plan"]
        compilation.memory_plan = MemoryPlan(
            arena_bytes=plan["arena_bytes"], lower_bound=plan["lower_bound"], allocator=plan["allocator"],
            offsets=plan["offsets"], lifetimes={k: Lifetime(*v) for k, v in plan["lifetimes"].items()},
            sizes=plan.get("sizes", {}), alignment=int(plan.get("alignment", 1)),
        )
    return str(state["stage"])


def _restore_layers(entries: list[dict[str, Any]], graph: gs.Graph, platform: Platform) -> list[Layer]:
    nodes = {node.name: node for node in graph.nodes}
    layers = []
    for entry in entries:
        node = nodes.get(entry["node"])
        if node is None:
            raise DeeployError(f"state names node {entry['node']!r}, which the graph does not have")
        mapper = next((m for _, m in platform.mappers_for(node.op) if m.label() == entry["mapper"]), None)
        if mapper is None or not 0 <= entry["binding"] < len(mapper.bindings):
            raise DeeployError(f"state names mapper {entry['mapper']!r}, which platform {platform.name!r} does not have")
        layer = Layer(entry["index"], node, mapper, mapper.bindings[entry["binding"]], dict(entry["representation"]),
                      entry["c_name"], list(entry["transients"]))
        layers.append(layer)
    return layers
