"""Three code transformations for testing opt-in selection and a plugin-declared option.

``dc-mark-a`` and ``dc-mark-b`` sit at the same point, so only the order in
which a compile selects them decides which runs first; each adds a comment
and a call counter to every layer, so the order shows in Network.c and the
counters must still compile and run.  ``dc-cluster-only`` declares the
pulp-cluster platform only.  Each declares the option ``label``, the text of
its comment (default: its own name), so that a value given with
``--option`` shows in the generated code, and two selected marks need a
qualifier (``--option dc-mark-a.label=...``).
"""

from __future__ import annotations

from deeploy_core import CodeTransformationExtension, hookimpl
from deeploy_core.options import OptionSpec


class MarkLayer:
    """Appends ``/* <label> */`` and an increment of a per-layer counter to the layer's body."""

    def __init__(self, name: str, label: str | None = None) -> None:
        self.name = name
        self.label = (label if label is not None else name).replace("*/", "* /")  # stays a comment

    def apply(self, block, ctxt):
        counter = f"{block.layer.c_name}_{self.name.replace('-', '_')}"
        block.definitions.append(f"static unsigned long {counter};")
        block.body.append(f"/* {self.label} */ ++{counter};")
        return block


def _label(name: str) -> OptionSpec:
    return OptionSpec("label", str, name, help="the comment this mark adds to every layer")


def _marks(name: str):
    def make(label: str = name) -> MarkLayer:
        return MarkLayer(name, label)

    return make


@hookimpl
def register_code_transformations(register):
    for name in ("dc-mark-a", "dc-mark-b"):
        register(CodeTransformationExtension(name=name, factory=_marks(name), options=(_label(name),),
                                             point="before-closure", description=f"marks every layer ({name})"))
    register(CodeTransformationExtension(name="dc-cluster-only", factory=_marks("dc-cluster-only"),
                                         options=(_label("dc-cluster-only"),), point="before-closure",
                                         platforms=("pulp-cluster",), description="marks every layer on the cluster"))
