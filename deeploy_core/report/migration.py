"""Reading ``report.json`` files written before the report's keys became snake_case.

Reports are kept and reused (``--tiling-from``, scripts that compare two
compiles), so a rename must not orphan the ones already on disk.  The table
below is the single record of what was renamed: :func:`upgrade_report` applies
it to a report of any age, and the migration note of docs/report.rst is
checked against it (``tests/test_report_schema.py``).  No logic depends on
which names a report used; everything reads the current names after the
upgrade.
"""

from __future__ import annotations

from typing import Any

TOP_LEVEL_RENAMES: dict[str, str] = {
    "numberOfOps": "number_of_ops",
    "worstCaseBufferSize": "worst_case_buffer_size",
}
"""Top-level keys: old name -> new name."""

REQUANTIZATION_RENAMES: dict[str, str] = {
    "rqsOut": "rqs_out",
}
"""Keys of a layer's ``requantization`` (RequantizedAdd's output group): old name -> new name."""


def upgrade_report(report: Any) -> Any:
    """``report`` with every old key under its new name (a new dict; anything that is not a dict comes back as is).

    A key present under both names keeps the new one's value: a report is
    never written with both, so that can only be a hand-made file, and the new
    name is the one the writer meant.
    """
    if not isinstance(report, dict):
        return report
    upgraded = _renamed(report, TOP_LEVEL_RENAMES)
    layers = upgraded.get("layers")
    if isinstance(layers, list):
        upgraded["layers"] = [_upgrade_layer(layer) for layer in layers]
    return upgraded


def _upgrade_layer(layer: Any) -> Any:
    if not isinstance(layer, dict) or not isinstance(layer.get("requantization"), dict):
        return layer
    return {**layer, "requantization": _renamed(layer["requantization"], REQUANTIZATION_RENAMES)}


def _renamed(mapping: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    result = {key: value for key, value in mapping.items() if key not in renames}
    for old, new in renames.items():
        if old in mapping and new not in mapping:
            result[new] = mapping[old]
    return result
