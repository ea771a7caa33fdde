"""Typed descriptors that plugins hand to the host's ``register`` callbacks.

A descriptor says *what* an extension is (kind, name, version, description) and
*how to make one* (``factory``).  Descriptors are frozen so that the registry can
share them freely, and the factory is called only when the user selects the
extension by name: loading a plugin must stay cheap and side-effect free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, ClassVar

_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


class TransformationPoint(str, Enum):
    """Named points in a layer's chain of code-transformation passes.

    The chain of a binding runs in this order; a plugin attaches its pass to one
    point instead of to a position index, so that it keeps working when the core
    or the platform adds passes of its own.
    """

    START = "start"
    BEFORE_MEMORY_MANAGEMENT = "before-memory-management"
    AFTER_MEMORY_MANAGEMENT = "after-memory-management"
    BEFORE_CLOSURE = "before-closure"
    END = "end"


@dataclass(frozen=True, kw_only=True)
class Extension:
    """Common fields of every extension descriptor.

    ``name`` is what users type on the command line (``--allocator NAME``), so it
    is restricted to lower-case letters, digits, ``.``, ``_`` and ``-``.
    """

    kind: ClassVar[str] = "extension"

    name: str
    factory: Callable[..., Any]
    description: str = ""
    version: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_PATTERN.match(self.name):
            raise ValueError(
                f"{self.kind} name {self.name!r} is invalid: use lower-case letters, digits, '.', '_' or '-'"
            )
        if not callable(self.factory):
            raise TypeError(f"{self.kind} {self.name!r}: factory must be callable, got {type(self.factory).__name__}")


@dataclass(frozen=True, kw_only=True)
class PlatformExtension(Extension):
    """A deployment platform.

    ``factory(**options)`` returns the platform's deployer (a
    :class:`deeploy_core.deployer.Deployer`), which owns the engines, op
    mappings, buffer kinds and default memory hierarchy of the platform.
    ``memory_level`` names the memory level (registered by the same or another
    plugin) the platform always compiles with, for targets whose kernels can
    only read a small compute memory; None (the default) compiles untiled
    unless the user asks for levels.
    """

    kind: ClassVar[str] = "platform"

    memory_level: str | None = None
    max_cores: int = 1
    """The most cores ``--cores`` may ask for (a cluster platform takes ``cores`` as a factory option)."""


@dataclass(frozen=True, kw_only=True)
class MemoryLevelExtension(Extension):
    """A memory hierarchy together with the policy that places tensors in it.

    ``factory(deployer, **options)`` wraps a platform deployer into a
    memory-level deployer wrapper.  ``platforms`` lists the platforms it fits;
    an empty tuple means any platform.
    """

    kind: ClassVar[str] = "memory_level"

    platforms: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TilerExtension(Extension):
    """A tiling strategy (buffering scheme, search strategy, tile constraints).

    ``factory(deployer, allocator, **options)`` wraps a memory-level deployer
    into a tiler deployer wrapper that uses ``allocator`` for its memory maps.
    """

    kind: ClassVar[str] = "tiler"

    platforms: tuple[str, ...] = ()
    buffering: str | None = None
    """The buffering scheme this tiler uses ("single", "double"), or None if it declares none.

    The tiler is the one source of truth for its multi-buffer coefficient:
    ``--buffering B`` selects the tiler that declares ``B`` and is refused
    together with a ``--tiler`` that declares something else.
    """


@dataclass(frozen=True, kw_only=True)
class AllocatorExtension(Extension):
    """A static memory allocator.

    ``factory(**options)`` returns an object with
    ``solve(problem) -> solution``: blocks with lifetimes and sizes plus a
    capacity in, one offset per block (or a proof of infeasibility) out.
    """

    kind: ClassVar[str] = "allocator"


@dataclass(frozen=True, kw_only=True)
class CodeTransformationExtension(Extension):
    """A pass over a layer's execution block, attached at a named point.

    ``factory(**options)`` returns the pass.  Within one point, passes run in
    ascending ``order`` and then by name, never in registration order.
    """

    kind: ClassVar[str] = "code_transformation"

    point: TransformationPoint = TransformationPoint.END
    order: int = 0
    platforms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "point", TransformationPoint(self.point))


@dataclass(frozen=True, kw_only=True)
class OperatorExtension(Extension):
    """Support for one ONNX operator on an existing platform.

    ``factory()`` returns the op mapping (parser + typed bindings + templates)
    that the platform adds to its table for ``op_type``.
    """

    kind: ClassVar[str] = "operator"

    platform: str
    op_type: str
    domain: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.platform or not self.op_type:
            raise ValueError(f"operator {self.name!r}: platform and op_type are required")


EXTENSION_TYPES: dict[str, type[Extension]] = {
    cls.kind: cls
    for cls in (
        PlatformExtension,
        MemoryLevelExtension,
        TilerExtension,
        AllocatorExtension,
        CodeTransformationExtension,
        OperatorExtension,
    )
}
"""Every extension kind, keyed by its ``kind`` string, in hook order."""


@dataclass(frozen=True)
class ExtensionOrigin:
    """Which plugin registered an extension (for listings and error messages)."""

    plugin: str
    distribution: str
    version: str = ""

    def __str__(self) -> str:
        label = f"{self.distribution} {self.version}".strip()
        return f"{self.plugin} ({label})"


@dataclass(frozen=True)
class RegisteredExtension:
    """An extension as stored in the registry: the descriptor and its origin."""

    extension: Extension
    origin: ExtensionOrigin = field(compare=False)
