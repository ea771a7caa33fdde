"""Typed views of a memory block that holds tensors of several element types, in valid ISO C.

The arena (and every level a tiler carves into tiles) is one block of memory reused by tensors of different
element types: an ``int32_t`` accumulator where an ``int8_t`` activation lived a layer before.  ISO C (C99
6.5p7) lets an object with a declared type be read only through its own type or a character type, so a
``uint8_t`` array read through ``int32_t *`` or ``float *`` is undefined behaviour, which optimisers may exploit.
The block is therefore declared as a union of arrays of every element type a kernel may use, and each tensor's
pointer designates an element of the member of its own type (``&view->i32[offset / 4]``): every access is then an
access to an object of the lvalue's type, whichever member last stored the bytes (a read of another member's
bytes is a reinterpretation, C99 6.5.2.3 note 82, and the generated code never reads a tensor as a type other
than the one it was written as, except through character types).

Each tensor gets a pointer *variable* of its own, set once by ``InitNetwork``, rather than an address expression
``base + offset``.  Besides readability, this sidesteps a gcc 12 wrong-code bug (see ``docs/correctness.rst``):
when two tensors of one loop were addressed from one base with different element sizes, IVOPTs rewrote one
address as an integer combination of the other's (a ``TARGET_MEM_REF`` with a literal null base), which the
pure-const and modref analyses then took for a null dereference ending the block; a layer function whose stores
came after it was declared pure, and its calls were deleted.  IVOPTs never expresses one object's address
through another object's, and two pointers loaded from two variables are two objects to it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ElementView:
    """One member of the union: its name, its C element type and the element's size in bytes."""

    member: str
    c_type: str
    size: int


ELEMENT_VIEWS: tuple[ElementView, ...] = (
    ElementView("u8", "uint8_t", 1), ElementView("i8", "int8_t", 1),
    ElementView("u16", "uint16_t", 2), ElementView("i16", "int16_t", 2),
    ElementView("u32", "uint32_t", 4), ElementView("i32", "int32_t", 4),
    ElementView("u64", "uint64_t", 8), ElementView("i64", "int64_t", 8),
    ElementView("f32", "float", 4), ElementView("f64", "double", 8),
)
"""Every element type a kernel reads or writes in a shared block (``bool`` tensors are ``uint8_t``)."""

_BY_TYPE = {view.c_type: view for view in ELEMENT_VIEWS}

def padded_bytes(size_bytes: int) -> int:
    """``size_bytes`` rounded up to the largest element (8 bytes), at least one element."""
    return max(8, -(-size_bytes // 8) * 8)


def union_members(size_bytes: int) -> str:
    """The member list (``uint8_t u8[N]; ... double f64[N / 8];``) of a block of ``size_bytes`` bytes."""
    size = padded_bytes(size_bytes)
    return " ".join(f"{view.c_type} {view.member}[{size // view.size}];" for view in ELEMENT_VIEWS)


def union_definition(tag: str, size_bytes: int) -> str:
    """``union TAG { ...every element type... };`` for a block of ``size_bytes`` bytes."""
    return f"union {tag} {{ {union_members(size_bytes)} }};"


def typed_address(view: str, c_type: str, offset: int, const: bool = False) -> str:
    """A ``c_type *`` C expression for byte ``offset`` of the block that the union pointer ``view`` points to.

    The address of an element of the member of ``c_type`` when the offset is a multiple of the element size (the
    memory planner aligns every tensor); otherwise, or for a type without a member, a cast of the byte address,
    which keeps the old behaviour where no typed member can express it.
    """
    element = _BY_TYPE.get(c_type)
    qualifier = "const " if const else ""
    if element is not None and offset % element.size == 0:
        return f"&{view}->{element.member}[{offset // element.size}]"
    return f"({qualifier}{c_type} *)({view}->u8 + {offset})"
