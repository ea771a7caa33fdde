"""Three code transformations for testing opt-in selection.

``dc-mark-a`` and ``dc-mark-b`` sit at the same point, so only the order in
which a compile selects them decides which runs first; each adds a comment
and a call counter to every layer, so the order shows in Network.c and the
counters must still compile and run.  ``dc-cluster-only`` declares the
pulp-cluster platform only.
"""

from __future__ import annotations

from deeploy_core import CodeTransformationExtension, hookimpl


class MarkLayer:
    """Appends ``/* <name> */`` and an increment of a per-layer counter to the layer's body."""

    def __init__(self, name: str) -> None:
        self.name = name

    def apply(self, block, ctxt):
        counter = f"{block.layer.c_name}_{self.name.replace('-', '_')}"
        block.definitions.append(f"static unsigned long {counter};")
        block.body.append(f"/* {self.name} */ ++{counter};")
        return block


@hookimpl
def register_code_transformations(register):
    for name in ("dc-mark-a", "dc-mark-b"):
        register(CodeTransformationExtension(name=name, factory=lambda name=name: MarkLayer(name),
                                             point="before-closure", description=f"marks every layer ({name})"))
    register(CodeTransformationExtension(name="dc-cluster-only", factory=lambda: MarkLayer("dc-cluster-only"),
                                         point="before-closure", platforms=("pulp-cluster",),
                                         description="marks every layer on the cluster"))
