"""The per-layer report (``report.json`` and the ``analyze`` table)."""

from __future__ import annotations

from typing import Any

from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.midend.memory_plan import MemoryPlan


def layer_rows(layers: list[Layer], ctxt: NetworkContext) -> list[dict[str, Any]]:
    """One row per layer: op, node, shapes, dtype, MACs, ops, weight/activation bytes, arena offsets."""
    rows = []
    for layer in layers:
        inputs = [ctxt[name] for name in layer.input_names]
        outputs = [ctxt[name] for name in layer.output_names]
        weights = [buffer for buffer in inputs if buffer.kind is BufferKind.CONSTANT]
        activations = [buffer for buffer in inputs + outputs if buffer.kind is not BufferKind.CONSTANT]
        rows.append(
            {
                "index": layer.index,
                "key": layer.c_name,
                "node": layer.name,
                "op": layer.op_type,
                "kernel": layer.mapper.label(),
                "signature": layer.binding.type_checker.signature(),
                "inputs": [{"name": b.name, "shape": list(b.shape), "dtype": str(b.dtype)} for b in inputs],
                "outputs": [{"name": b.name, "shape": list(b.shape), "dtype": str(b.dtype)} for b in outputs],
                "macs": int(layer.representation.get("macs", 0)),
                "ops": layer.ops,
                "weight_bytes": sum(b.size_bytes for b in weights),
                "activation_bytes": sum(b.size_bytes for b in activations),
                "scratch_bytes": sum(ctxt[name].size_bytes for name in layer.transients),
                "requantization": layer.representation.get("requantization"),
                "arena_offsets": {
                    b.name: ctxt.storage_of(b.name).offset
                    for b in outputs
                    if ctxt.storage_of(b.name).offset is not None
                },
            }
        )
    return rows


def network_report(
    name: str, platform: str, layers: list[Layer], ctxt: NetworkContext, plan: MemoryPlan, warnings: list[str]
) -> dict[str, Any]:
    """The platform deployer's part of ``report.json``; the stage driver adds ``options`` and ``provenance``, and
    wrappers their own sections (``report.schema.json`` beside this module lists every key)."""
    rows = layer_rows(layers, ctxt)
    constants = ctxt.of_kind(BufferKind.CONSTANT)
    return {
        "network": name,
        "platform": platform,
        "number_of_ops": sum(row["ops"] for row in rows),
        "macs": sum(row["macs"] for row in rows),
        "weight_bytes": sum(buffer.size_bytes for buffer in constants),
        "worst_case_buffer_size": {"arena": plan.arena_bytes},
        "memory": plan.to_json(),
        "layers": rows,
        "warnings": list(warnings),
    }
