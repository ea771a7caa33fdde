"""A per-layer profile: each layer's measured time beside what the report knows about it.

The times come from a profile build (:mod:`deeploy_core.codegen.profile_marks`):
one figure per layer of ``RunNetwork``.  A fused tile loop runs several layers
at once inside the block of the last of them, so the layers of one fused
pattern become one row: splitting its time by a guess would show numbers
nobody measured.  Everything else comes from ``report.json``: the ONNX node
names, ops, kernels and MACs, the arena bytes live while the layer runs, the
compute level's bytes of a tiled layer and, where a platform has a cost
model (pulp-cluster), its estimated cycles.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deeploy_core.errors import DeeployError


@dataclass(frozen=True)
class ProfileRow:
    """One timed region of ``RunNetwork``: a layer, or the layers one fused tile loop runs together."""

    nodes: tuple[str, ...]
    ops: tuple[str, ...]
    kernels: tuple[str, ...]
    macs: int
    ns: float
    live_bytes: int
    level_bytes: int | None = None
    estimated_cycles: int | None = None
    indices: tuple[int, ...] = ()
    """The layers' positions in ``RunNetwork``: the row's time runs from the mark before the first to the one after
    the last."""

    @property
    def label(self) -> str:
        """The ONNX node name(s), fused layers joined by arrows."""
        return " → ".join(self.nodes)

    @property
    def short_label(self) -> str:
        """The label on one table line: a fused run by its first and last node and how many it holds."""
        if not self.fused:
            return self.nodes[0]
        return f"{self.nodes[0]} … {self.nodes[-1]} ({len(self.nodes)} fused)"

    @property
    def op(self) -> str:
        """The ops, each once with its count (``RequantizedConv ×3, MaxPool``)."""
        return ", ".join(op if count == 1 else f"{op} ×{count}" for op, count in Counter(self.ops).items())

    @property
    def kernel(self) -> str:
        return ", ".join(dict.fromkeys(self.kernels))

    @property
    def fused(self) -> bool:
        return len(self.nodes) > 1

    @property
    def estimate_cells(self) -> tuple[str, str]:
        """The estimated cycles and MACs per estimated cycle as every table shows them ("-" where unknown)."""
        ratio = self.macs_per_estimated_cycle
        return ("-" if self.estimated_cycles is None else f"{self.estimated_cycles:,}",
                "-" if ratio is None else f"{ratio:.2f}")

    @property
    def macs_per_estimated_cycle(self) -> float | None:
        """MACs per cycle of the cost model's estimate (no host build has a cycle counter to measure them)."""
        if not self.estimated_cycles or not self.macs:
            return None
        return self.macs / self.estimated_cycles


@dataclass(frozen=True)
class LayerProfile:
    """The rows of one profiled network and what the page and the table say about the run."""

    network: str
    platform: str
    settings: str
    rows: tuple[ProfileRow, ...]
    repeats: int
    compute_level: str | None = None

    @property
    def total_ns(self) -> float:
        return sum(row.ns for row in self.rows)

    def share(self, row: ProfileRow) -> float:
        """The row's part of the summed layer times, in percent."""
        total = self.total_ns
        return 100.0 * row.ns / total if total > 0 else 0.0

    @property
    def has_estimate(self) -> bool:
        return any(row.estimated_cycles is not None for row in self.rows)


def node_label(layer: Mapping[str, Any]) -> str:
    """A layer's ONNX node name, or its op and position when the model left the node unnamed."""
    return str(layer["node"]) or f"{layer['op']} #{layer['index']}"


def layer_keys(report: Mapping[str, Any]) -> list[str]:
    """Each layer's C name, the key the tiling report uses (``layer K`` in a report from before keys were written)."""
    return [str(layer.get("key", f"layer {layer['index']}")) for layer in report["layers"]]


def _live_bytes(report: Mapping[str, Any], step: int) -> int:
    """Bytes of the arena's buffers alive at ``step`` (lifetimes are ``[first_step, end_step)``)."""
    return sum(int(buffer["size"] or 0) for buffer in report.get("memory", {}).get("buffers", ())
               if buffer["first_step"] <= step < buffer["end_step"])


def timed_regions(report: Mapping[str, Any]) -> list[list[int]]:
    """Layer indices by table row: each fused pattern's layers together, every other layer alone."""
    keys = layer_keys(report)
    position = {key: index for index, key in enumerate(keys)}
    group_of: dict[int, int] = {}
    for number, pattern in enumerate(report.get("tiling", {}).get("patterns", ())):
        for key in pattern.get("keys", ()):
            if key in position:
                group_of[position[key]] = number
    rows: list[list[int]] = []
    for index in range(len(keys)):
        if index in group_of and rows and group_of.get(rows[-1][-1]) == group_of[index]:
            rows[-1].append(index)
        else:
            rows.append([index])
    return rows


def layer_profile(report: Mapping[str, Any], layer_ns: Sequence[float], repeats: int, settings: str = "") -> LayerProfile:
    """The profile of the compile ``report`` describes, from the per-layer times of its profile build."""
    layers = list(report["layers"])
    if len(layer_ns) != len(layers):
        raise DeeployError(f"the profile build timed {len(layer_ns)} layers, the report lists {len(layers)}: the "
                           f"program was built from another compile; rebuild it")
    keys = layer_keys(report)
    tiling = report.get("tiling", {})
    tiled = {entry["key"]: entry for entry in tiling.get("layers", ())}
    estimates = report.get("estimate", {}).get("layers", ())
    estimated = {entry["key"]: int(cost["cycles"]) for entry, cost in zip(tiling.get("layers", ()), estimates)}
    rows = []
    for group in timed_regions(report):
        members = [layers[index] for index in group]
        level = [tiled[keys[index]]["level_bytes"] for index in group if keys[index] in tiled]
        cycles = [estimated[keys[index]] for index in group if keys[index] in estimated]
        rows.append(ProfileRow(
            nodes=tuple(node_label(layer) for layer in members),
            ops=tuple(str(layer["op"]) for layer in members),
            kernels=tuple(str(layer["kernel"]) for layer in members),
            macs=sum(int(layer["macs"]) for layer in members),
            ns=float(sum(layer_ns[index] for index in group)),
            live_bytes=max(_live_bytes(report, index) for index in group),
            level_bytes=max(level) if level else None,
            estimated_cycles=sum(cycles) if cycles else None,
            indices=tuple(group),
        ))
    return LayerProfile(network=str(report.get("network", "network")), platform=str(report.get("platform", "")),
                        settings=settings, rows=tuple(rows), repeats=repeats,
                        compute_level=tiling.get("compute_level"))
