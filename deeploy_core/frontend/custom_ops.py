"""Declarations of operators that ONNX has no schema for.

ONNX's checker and shape inference know only the standard operators, so a
node such as Deeploy's ``IntegerMean`` (default domain) or a vendor's
``com.example::Foo`` has neither a type nor a shape after import.  A platform
(:attr:`deeploy_core.platform.Platform.custom_ops`) or an operator plugin
(:attr:`deeploy_core.extensions.OperatorExtension.schema`) that claims such an
op declares a :class:`CustomOpSchema`: how the element types and shapes of its
outputs follow from those of its inputs and its attributes.  The front end
fills the declared outputs in while onnx's strict inference types every
standard node around them.

The declaration is plain data plus two pure functions: nothing is registered
in onnx's global schema table, so one compile's declarations never leak into
the next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DECLARED_DOMAIN = "ai.deeploy_core.declared"
"""Where declared nodes wait while onnx's checker, converter and inference run (see ``declared_ops``)."""

Shape = tuple[int, ...]
ShapeRule = Callable[[Sequence[Shape | None], Mapping[str, Any]], Sequence[Shape]]
"""(input shapes, None for an omitted optional input; attributes by name) -> one shape per output."""
TypeRule = Callable[[Sequence[int | None], Mapping[str, Any]], Sequence[int]]
"""(input element types as ``onnx.TensorProto`` codes; attributes) -> one element type per output."""


def same_shape_as_first_input(shapes: Sequence[Shape | None], attributes: Mapping[str, Any]) -> Sequence[Shape]:
    """The rule of every element-wise op: one output shaped like input 0."""
    first = shapes[0] if shapes else None
    if first is None:
        raise ValueError("input 0 has no shape")
    return [first]


def same_type_as_first_input(types: Sequence[int | None], attributes: Mapping[str, Any]) -> Sequence[int]:
    """One output of input 0's element type (fake-quantised exports carry integers in float tensors)."""
    first = types[0] if types else None
    if not first:
        raise ValueError("input 0 has no element type")
    return [first]


@dataclass(frozen=True)
class CustomOpSchema:
    """How the outputs of a schema-less op are typed and shaped.

    ``domain`` is ``""`` for the default domain (``ai.onnx`` is spelled the
    same way).  Both rules are called once per node with the node's inputs,
    in input order; they return one entry per output and raise ``ValueError``
    with a short reason when the inputs or attributes do not fit the op.
    """

    op_type: str
    domain: str = ""
    shapes: ShapeRule = same_shape_as_first_input
    types: TypeRule = same_type_as_first_input

    def __post_init__(self) -> None:
        if not self.op_type:
            raise ValueError("CustomOpSchema: op_type is required")
        object.__setattr__(self, "domain", "" if self.domain == "ai.onnx" else self.domain)

    @property
    def key(self) -> tuple[str, str]:
        """``(domain, op_type)``, how the front end looks the declaration up."""
        return self.domain, self.op_type


@dataclass(frozen=True)
class OpClaims:
    """What the selected platform (with its operator plugins) accepts beyond ONNX's schemas.

    ``claimed`` holds the op keys some mapper handles (``IntegerMean``,
    ``com.example.Foo``); ``schemas`` the declarations found for them;
    ``supporters`` names, for an op key, the installed platforms that map it
    (asked only to word the unsupported-op report).
    """

    platform: str
    claimed: frozenset[str]
    schemas: Mapping[tuple[str, str], CustomOpSchema]
    supporters: Callable[[str], tuple[str, ...]]
