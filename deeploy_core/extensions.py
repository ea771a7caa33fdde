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
from pathlib import Path
from typing import TYPE_CHECKING, Callable, ClassVar, Concatenate, Generic, Iterable, ParamSpec

from deeploy_core.extension_origin import ExtensionOrigin as ExtensionOrigin
from deeploy_core.options.spec import OptionSpec, check_option_specs

if TYPE_CHECKING:  # the geometry module imports onnx-graphsurgeon: too heavy for loading plugins
    from deeploy_core.codegen.execution_block import CodeTransformation
    from deeploy_core.compilation.settings import CompileSettings
    from deeploy_core.extension_contracts import AllocatorContract, DeployerContract
    from deeploy_core.frontend.custom_ops import CustomOpSchema
    from deeploy_core.mapping import NodeMapper
    from deeploy_core.platform import Platform
    from deeploy_core.tiling.geometry import TileConstraint

FactoryParams = ParamSpec("FactoryParams")
"""The parameters of an extension's factory: each descriptor is generic in them, so that a type checker knows the
factory's signature without the descriptor spelling ``Callable[..., Any]``."""

_NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_OP_TYPE_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
class Extension(Generic[FactoryParams]):
    """Common fields of every extension descriptor.

    ``name`` is what users type on the command line (``--allocator NAME``), so it
    is restricted to lower-case letters, digits, ``.``, ``_`` and ``-``.

    ``options`` declares what the extension can be told per compile
    (:class:`~deeploy_core.options.OptionSpec`: name, type, default, help).
    When the compile selects the extension, the core checks the user's
    ``--option NAME=VALUE`` against them and calls ``factory`` with every
    declared option as a keyword argument (the given value or the default),
    so the factory's keyword defaults should equal the declared ones: it is
    also called without them (``host.create`` in a plugin's own tests).
    """

    kind: ClassVar[str] = "extension"

    name: str
    factory: Callable[FactoryParams, object]
    """Makes the extension when a compile selects it; each kind narrows what it returns
    (:mod:`deeploy_core.extension_contracts`)."""
    description: str = ""
    version: str = ""
    options: tuple[OptionSpec, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_PATTERN.match(self.name):
            raise ValueError(
                f"{self.kind} name {self.name!r} is invalid: use lower-case letters, digits, '.', '_' or '-'"
            )
        if not callable(self.factory):
            raise TypeError(f"{self.kind} {self.name!r}: factory must be callable, got {type(self.factory).__name__}")
        object.__setattr__(self, "options", check_option_specs(f"{self.kind} {self.name!r}", self.options))


@dataclass(frozen=True, kw_only=True)
class PlatformExtension(Extension[Concatenate["CompileSettings", FactoryParams]]):
    """A deployment platform.

    ``factory(settings, **options)`` returns the platform's deployer (a
    :class:`deeploy_core.deployer.Deployer`), which owns the engines, op
    mappings, buffer kinds and default memory hierarchy of the platform.
    ``settings`` is one :class:`~deeploy_core.compilation.CompileSettings`,
    the core's (input shapes and types, quantization, network name, …), which
    the factory passes on to the deployer (``NetworkDeployer(platform,
    settings)``); ``options`` are the values of the platform's own declared
    options as keywords (a cluster's ``cores``: ``--cores N`` sets it, and a
    platform that declares no ``cores`` runs on one core).  The two never
    share a namespace, so a platform may name its options as it likes.
    ``memory_level`` names the memory level (registered by the same or another
    plugin) the platform always compiles with, for targets whose kernels can
    only read a small compute memory; None (the default) compiles untiled
    unless the user asks for levels.

    ``platform_data`` is a function without arguments that returns the
    platform's data (a :class:`deeploy_core.platform.Platform`: the ops its
    mappers claim, its custom-op declarations), the same data the deployer
    compiles with.  The front end reads the claims from it, never by building
    a deployer, to import a model for ``validate`` and to say which installed
    platforms support an op that another one refuses.  A platform without it
    is only known by name there: its ops are seen when a compile selects it.
    """

    kind: ClassVar[str] = "platform"

    factory: Callable[Concatenate[CompileSettings, FactoryParams], DeployerContract]
    memory_level: str | None = None
    platform_data: Callable[[], Platform] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.platform_data is not None and not callable(self.platform_data):
            raise TypeError(f"platform {self.name!r}: platform_data must be a function without arguments, got "
                            f"{type(self.platform_data).__name__}")


@dataclass(frozen=True, kw_only=True)
class MemoryLevelExtension(Extension[FactoryParams]):
    """A memory hierarchy together with the policy that places tensors in it.

    ``factory(deployer, **options)`` wraps a platform deployer into a
    memory-level deployer wrapper.  ``platforms`` lists the platforms it fits;
    an empty tuple means any platform.

    ``level_sizes`` names the hierarchy's levels with their default sizes in
    bytes (None: unbounded), outermost or innermost first as the plugin likes.
    Each becomes an option named after its level in lower case, unset by
    default (``--l1 64000`` sets ``l1``; the factory receives None when the
    user leaves the level's own size), placed before the plugin's other
    ``options``: the sizes are declared once, as data, and the options are made
    from them.
    """

    kind: ClassVar[str] = "memory_level"

    factory: Callable[FactoryParams, DeployerContract]
    platforms: tuple[str, ...] = ()
    level_sizes: tuple[tuple[str, int | None], ...] = ()

    def __post_init__(self) -> None:
        from deeploy_core.options.levels import level_size_options

        declared = {spec.name for spec in self.options}  # already there when dataclasses.replace copies a descriptor
        sizes = tuple(spec for spec in level_size_options(self.level_sizes) if spec.name not in declared)
        object.__setattr__(self, "options", (*sizes, *self.options))
        super().__post_init__()


@dataclass(frozen=True, kw_only=True)
class TilerExtension(Extension[FactoryParams]):
    """A tiling strategy (buffering scheme, search strategy, tile constraints).

    ``factory(deployer, allocator, **options)`` wraps a memory-level deployer
    into a tiler deployer wrapper that uses ``allocator`` for its memory maps.
    A tiler with a search objective declares it as option ``strategy``
    (``--tiling-strategy`` sets it).
    """

    kind: ClassVar[str] = "tiler"

    factory: Callable[FactoryParams, DeployerContract]
    platforms: tuple[str, ...] = ()
    buffering: str | None = None
    """The buffering scheme this tiler uses ("single", "double"), or None if it declares none.

    The tiler is the one source of truth for its multi-buffer coefficient:
    ``--buffering B`` selects the tiler that declares ``B`` and is refused
    together with a ``--tiler`` that declares something else.
    """


@dataclass(frozen=True, kw_only=True)
class AllocatorExtension(Extension[FactoryParams]):
    """A static memory allocator.

    ``factory(**options)`` returns an object with
    ``solve(problem) -> solution``: blocks with lifetimes and sizes plus a
    capacity in, one offset per block (or a proof of infeasibility) out.
    """

    kind: ClassVar[str] = "allocator"

    factory: Callable[FactoryParams, AllocatorContract]

@dataclass(frozen=True, kw_only=True)
class CodeTransformationExtension(Extension[FactoryParams]):
    """A pass over a layer's execution block, attached at a named point.

    ``factory(**options)`` returns the pass.  It runs only when selected: by
    name in the platform's chain (``Platform.code_transformations``) or by the
    user (``--code-transformation NAME``).  Within one point, selected passes
    run in selection order (the platform's names, then the user's), never in
    registration order; ``order`` no longer decides and is kept so that
    existing registrations stay valid.
    """

    kind: ClassVar[str] = "code_transformation"

    factory: Callable[FactoryParams, CodeTransformation]
    point: TransformationPoint = TransformationPoint.END
    order: int = 0
    platforms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "point", TransformationPoint(self.point))


class OperatorNumerics(str, Enum):
    """How closely an operator's kernel follows its reference, as its plugin declares it.

    Declared rather than guessed so that a conformance run holds the kernel to
    the promise its author made, and a reader of the listing knows whether the
    op's results are bit-exact or only close.
    """

    EXACT = "exact"
    """Bit-identical to the reference (integer kernels, or float kernels that round exactly like it)."""
    FLOAT_TOLERANCE = "float-tolerance"
    """Within a floating-point tolerance of the reference (transcendental functions, reordered sums)."""
    UNDECLARED = "undeclared"
    """No promise: integer outputs are compared exactly and float outputs within a tolerance."""


@dataclass(frozen=True, kw_only=True)
class OperatorExtension(Extension[[]]):
    """Support for one ONNX operator on an existing platform, from any distribution.

    ``factory()`` returns a :class:`deeploy_core.mapping.NodeMapper` (parser
    + typed bindings + templates) for nodes of ``op_type`` in ``domain`` on
    ``platform``.  Everything else the op needs travels with the descriptor,
    so that the platform's own code never has to know about the plugin:

    ``tile_constraint``
        A :class:`deeploy_core.tiling.geometry.TileConstraint` telling the
        tiler which output axes the kernel may be cut along, or a function
        without arguments that returns one (so that registering imports
        nothing heavy; it is called when the op is used).  Without one the
        core's default for the op type applies (e.g. element-wise ops), and an
        op the core knows nothing about runs as one tile holding its whole
        tensors: untiled compiles are unaffected, a tiled compile (and a
        platform that always tiles) refuses it with the tiler's one-line
        diagnosis when those tensors do not fit the compute level.
    ``sources`` / ``include_dirs``
        C files compiled into the network's runtime and the folders of the
        headers the template includes; only networks that use the op get them.
    ``numerics``
        The :class:`OperatorNumerics` the kernel promises; the
        :class:`~deeploy_core.testing.OperatorConformance` suite holds it to it.
    ``override``
        Whether the plugin's mapper is tried *before* the platform's own.
    ``schema``
        For an op ONNX has no schema for, a
        :class:`~deeploy_core.frontend.custom_ops.CustomOpSchema` declaring
        how its outputs are typed and shaped; the front end accepts such nodes
        only on a platform something claims them for, and types them with it.

    Precedence, for every node: mappers of extensions with ``override=True``
    (in registration order), then the platform's own mappers, then the other
    extensions' mappers (in registration order); the first mapper whose parser
    and a binding accept the node wins.  Registration order is the host's:
    built-in plugins first, then installed plugins by distribution name (the
    order that also settles duplicate names), and within one plugin the order
    of its ``register`` calls.  So a plugin adds ops and variants but never
    silently changes the code of an op the platform already compiles; with
    ``override=True`` it does so openly, and ``deeploy-core plugins`` and
    ``supported-ops`` say which variant is shadowed by which.
    """

    kind: ClassVar[str] = "operator"

    factory: Callable[[], NodeMapper]
    platform: str
    op_type: str
    domain: str = ""
    override: bool = False
    tile_constraint: TileConstraint | Callable[[], TileConstraint] | None = None
    sources: tuple[Path, ...] = ()
    include_dirs: tuple[Path, ...] = ()
    numerics: OperatorNumerics = OperatorNumerics.UNDECLARED
    schema: CustomOpSchema | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.options:
            raise ValueError(f"operator {self.name!r}: operators take no options (nothing selects them per compile)")
        if not self.platform or not self.op_type:
            raise ValueError(f"operator {self.name!r}: platform and op_type are required")
        if not _OP_TYPE_PATTERN.match(self.op_type):
            raise ValueError(f"operator {self.name!r}: op_type {self.op_type!r} is not an ONNX operator name")
        object.__setattr__(self, "domain", "" if self.domain == "ai.onnx" else self.domain)
        object.__setattr__(self, "numerics", OperatorNumerics(self.numerics))
        if self.schema is not None and getattr(self.schema, "key", None) != (self.domain, self.op_type):
            raise ValueError(f"operator {self.name!r}: schema must be a CustomOpSchema for {self.op_key}")
        object.__setattr__(self, "sources", _existing_paths(self, "sources", self.sources, want_file=True))
        object.__setattr__(self, "include_dirs",
                           _existing_paths(self, "include_dirs", self.include_dirs, want_file=False))
        if self.tile_constraint is not None and not callable(self.tile_constraint):
            from deeploy_core.tiling.geometry import TileConstraint as _TileConstraint  # already imported by the plugin

            if not isinstance(self.tile_constraint, _TileConstraint):
                raise TypeError(f"operator {self.name!r}: tile_constraint must be a TileConstraint or a function "
                                f"returning one, got {type(self.tile_constraint).__name__}")

    @property
    def op_key(self) -> str:
        """The key platforms map the op under: ``Mish`` in the default domain, ``com.example.Fused`` elsewhere."""
        return self.op_type if not self.domain else f"{self.domain}.{self.op_type}"


def _existing_paths(extension: Extension, field_name: str, values: str | Path | Iterable[str | Path],
                    want_file: bool) -> tuple[Path, ...]:
    """``values`` as a tuple of absolute paths, each an existing file (or folder): a typo fails the plugin at load."""
    if isinstance(values, (str, Path)):
        values = (values,)
    paths = tuple(Path(value).resolve() for value in values)
    for path in paths:
        if not (path.is_file() if want_file else path.is_dir()):
            what = "file" if want_file else "folder"
            raise ValueError(f"{extension.kind} {extension.name!r}: {field_name} names {str(path)!r}, "
                             f"which is not an existing {what}")
    return paths


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
class RegisteredExtension:
    """An extension as stored in the registry: the descriptor and its origin."""

    extension: Extension
    origin: ExtensionOrigin = field(compare=False)
