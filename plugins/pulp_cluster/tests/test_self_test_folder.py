"""The HAL header an output folder ships says exactly what a SoC port must provide.

``runtime/include/pulp_hal.h`` is the one file a firmware engineer reads to
port generated code to a chip: its opening checklist must name every function
the header declares, and nothing it does not declare.
"""

from __future__ import annotations

import re

from deeploy_pulp_cluster.platform import RUNTIME_DIR

HAL = RUNTIME_DIR / "include" / "pulp_hal.h"


def _checklist_names(text: str) -> set[str]:
    block = text.split("What a port to a real SoC must provide", 1)[1].split("In an output folder", 1)[0]
    names: set[str] = set()
    for word in re.findall(r"pulp_\w+(?:/\w+)*", block):
        head, *variants = word.split("/")
        names.add(head)
        stem = head.rsplit("_", 1)[0]
        names.update(f"{stem}_{variant}" if not variant.startswith("pulp_") else variant for variant in variants)
    return names


def test_the_port_checklist_names_every_declared_function() -> None:
    text = HAL.read_text(encoding="utf-8")
    declared = set(re.findall(r"^[a-z_][\w \t\*]*?\b(pulp_\w+)\(", text, re.MULTILINE))
    assert {"pulp_dma_wait", "pulp_barrier", "pulp_core_id", "pulp_l1_base"} <= declared
    assert _checklist_names(text) == declared
