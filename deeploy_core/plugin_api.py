"""The plugin author's API: the one module of the core that a plugin package imports.

Why one module
    The core's internals (how the tiler lays out a tile, where a literal is
    formatted, which module holds a dataclass) change whenever the core is
    refactored.  A plugin that imports them breaks with every such change; a
    plugin that imports only from here keeps working as long as the
    :data:`API_VERSION` major it was written for is the core's.  The user-facing
    compile API is :mod:`deeploy_core.api`; this module is for the authors of
    platforms, memory levels, tilers, allocators, code transformations and
    operators.

The rule
    A plugin's package imports from ``deeploy_core.plugin_api`` and, for its
    test helpers and conformance suites, ``deeploy_core.testing`` — nothing
    else of ``deeploy_core`` (not even ``from deeploy_core import X``).  The
    bundled plugins and ``examples/operator-plugin`` follow it, and
    ``tests/test_plugin_api.py`` fails, naming file, line and module, when one
    reaches past the two.  A plugin's own tests may import anything.

The contract
    Every name in ``__all__`` is part of the API.  Within one major version a
    name is never removed and never changes meaning; a minor version only adds
    names (or optional arguments).  A plugin may state the version it was
    written against in a constant of the object its entry point names — a
    module-level ``DEEPLOY_CORE_API = "2.0"`` in the plugin module (or a class
    attribute, when the entry point names a class or instance)::

        DEEPLOY_CORE_API = "2.0"

    The host compares majors only: a plugin declaring another major (``"1.0"``
    on a 2.x core) is not loaded — ``deeploy-core plugins`` lists it as
    ``failed`` with a reason naming both versions — while any minor of the same
    major is accepted (a name newer than this core then fails the plugin's
    import, which is reported the same way).  A plugin without the constant is
    loaded as before: declaring is optional, but only a declared plugin is
    refused cleanly instead of failing somewhere inside its code.  A value that
    is not ``"MAJOR.MINOR"`` fails the plugin with a reason saying so.

What is in it
    Only what a plugin of some kind needs, measured from the bundled plugins,
    ``examples/operator-plugin`` and the ``new-plugin`` template: 65 names.  The
    tiler's internals are not among them; a plugin that needs a tiling's
    results (the cluster's cost model) reads them through the read-only
    :class:`TilingView`.  Version 2.0 narrowed the 1.x surface of 104 names:
    ``docs/plugin-api.rst`` lists what moved and how to migrate.

Import cost
    Plugins are imported by every command (``deeploy-core plugins`` too), so
    importing this module must stay cheap.  The names a registration needs —
    :data:`API_VERSION`, :data:`hookimpl`, the extension descriptors and the
    errors — are imported with the module; every other name is imported from
    its home on first access (``from deeploy_core.plugin_api import
    NetworkDeployer`` loads the network deployer with numpy and ONNX).  A
    plugin's registration module therefore names heavy types under
    ``if TYPE_CHECKING:`` and imports them inside its factories.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from deeploy_core.errors import DeeployError as DeeployError
from deeploy_core.extensions import AllocatorExtension as AllocatorExtension
from deeploy_core.extensions import CodeTransformationExtension as CodeTransformationExtension
from deeploy_core.extensions import MemoryLevelExtension as MemoryLevelExtension
from deeploy_core.extensions import OperatorExtension as OperatorExtension
from deeploy_core.extensions import OperatorNumerics as OperatorNumerics
from deeploy_core.extensions import PlatformExtension as PlatformExtension
from deeploy_core.extensions import TilerExtension as TilerExtension
from deeploy_core.extensions import TransformationPoint as TransformationPoint
from deeploy_core.options import OptionSpec as OptionSpec
from deeploy_core import hookspecs as _hookspecs
from deeploy_core import plugin_api_version as _version

API_VERSION = _version.API_VERSION
"""The version of this API, ``"MAJOR.MINOR"``: a plugin declaring another major in ``DEEPLOY_CORE_API`` is refused."""

hookimpl = _hookspecs.hookimpl
"""Marks a plugin's function (or method) as the implementation of the hook of the same name (see :doc:`hooks`).

:meta hide-value:
"""

_EAGER: tuple[str, ...] = (
    "API_VERSION", "hookimpl", "PlatformExtension", "MemoryLevelExtension", "TilerExtension", "AllocatorExtension",
    "CodeTransformationExtension", "TransformationPoint", "OperatorExtension", "OperatorNumerics", "OptionSpec",
    "DeeployError",
)
"""The contract, the hook marker, the descriptors, their options and the error: imported with the module."""

_LAZY: dict[str, tuple[str, ...]] = {
    # element types and buffers
    "deeploy_core.ir": ("Buffer", "DataType", "NetworkContext"),
    "deeploy_core.ir.element_types": ("dtypes",),
    # operators: parser, type checker, template, binding, mapper
    "deeploy_core.mapping": ("NodeBinding", "NodeMapper", "NodeMismatch", "NodeParser", "NodeTemplate",
                             "NodeTypeChecker",
                             # TFLite's integer parameters, shared by the platforms that run its arithmetic
                             "tflite_parameters"),
    "deeploy_core.mapping.parser": ("OperatorRepresentation",),
    "deeploy_core.mapping.alias": ("ALIAS_MAPPERS",),
    "deeploy_core.frontend.custom_ops": ("CustomOpSchema",),
    # tile geometry: which output axes a kernel may be cut along
    "deeploy_core.tiling.geometry": ("Box", "Extent", "TileConstraint", "Elementwise", "ChannelParameters",
                                     "SlidingWindow", "AlongAxes"),
    # memory levels
    "deeploy_core.memory": ("MemoryHierarchy", "MemoryLevel"),
    "deeploy_core.memory.wrapper": ("MemoryLevelDeployerWrapper",),
    # platform data
    "deeploy_core.platform": ("Platform", "Engine", "RuntimeLibrary", "StaticPlacement"),
    "deeploy_core.platform.board": ("BoardSupport",),
    "deeploy_core.mapping.external_library": ("ExternalLibrary",),
    "deeploy_core.mapping.kernel_runtime": ("KernelRuntime",),
    "deeploy_core.plugins.installed_platforms": ("installed_platform",),
    "deeploy_core.platform.verification": ("OpVerification",),
    "deeploy_core.tiling.transfers": ("TransferPrimitives", "HOST_MEMCPY"),
    "deeploy_core.tiling.parallel": ("ClusterParallelism",),
    # static allocation
    "deeploy_core.allocation": ("AllocationBlock", "AllocationProblem", "AllocationSolution", "ModelBlock"),
    # graph passes
    "deeploy_core.passes": ("Pass", "Modifies", "OpChainPattern", "Subgraph", "SubgraphTransformation"),
    # deployers, the core's settings they are made with, and what they produce
    "deeploy_core.compilation.settings": ("CompileSettings",),
    "deeploy_core.deployer": ("Deployer", "DeployerWrapper"),
    "deeploy_core.network": ("NetworkDeployer", "GeneratedNetwork"),
    # a compile's tiling, read-only
    "deeploy_core.tiling.view": ("TilingView",),
    # code generation
    "deeploy_core.codegen.execution_block": ("ExecutionBlock",),
    "deeploy_core.codegen.literals": ("c_array_values",),
}
"""The lazily exported names by the module they live in: the one table ``__all__`` and the lookup are made from."""

_HOMES: dict[str, str] = {name: module for module, names in _LAZY.items() for name in names}
"""Where each lazily exported name lives; imported on first access so that loading a plugin stays cheap."""

if TYPE_CHECKING:  # the lazily imported names, for type checkers (tests/test_plugin_api.py keeps it equal to _LAZY)
    from typing import TypeAlias

    from deeploy_core.allocation import AllocationBlock as AllocationBlock
    from deeploy_core.allocation import AllocationProblem as AllocationProblem
    from deeploy_core.allocation import AllocationSolution as AllocationSolution
    from deeploy_core.allocation import ModelBlock as ModelBlock
    from deeploy_core.codegen.execution_block import ExecutionBlock as ExecutionBlock
    from deeploy_core.codegen.literals import c_array_values as c_array_values
    from deeploy_core.compilation.settings import CompileSettings as CompileSettings
    from deeploy_core.deployer import Deployer as Deployer
    from deeploy_core.deployer import DeployerWrapper as DeployerWrapper
    from deeploy_core.frontend.custom_ops import CustomOpSchema as CustomOpSchema
    from deeploy_core.ir import Buffer as Buffer
    from deeploy_core.ir import DataType as DataType
    from deeploy_core.ir import NetworkContext as NetworkContext
    from deeploy_core.ir import element_types as _element_types
    from deeploy_core.mapping import NodeBinding as NodeBinding
    from deeploy_core.mapping import NodeMapper as NodeMapper
    from deeploy_core.mapping import NodeMismatch as NodeMismatch
    from deeploy_core.mapping import NodeParser as NodeParser
    from deeploy_core.mapping import NodeTemplate as NodeTemplate
    from deeploy_core.mapping import NodeTypeChecker as NodeTypeChecker
    from deeploy_core.mapping import parser as _parser
    from deeploy_core.mapping.alias import ALIAS_MAPPERS as _ALIAS_MAPPERS
    from deeploy_core.memory import MemoryHierarchy as MemoryHierarchy
    from deeploy_core.memory import MemoryLevel as MemoryLevel
    from deeploy_core.memory.wrapper import MemoryLevelDeployerWrapper as MemoryLevelDeployerWrapper
    from deeploy_core.network import GeneratedNetwork as GeneratedNetwork
    from deeploy_core.network import NetworkDeployer as NetworkDeployer
    from deeploy_core.passes import Modifies as Modifies
    from deeploy_core.passes import OpChainPattern as OpChainPattern
    from deeploy_core.passes import Pass as Pass
    from deeploy_core.passes import Subgraph as Subgraph
    from deeploy_core.passes import SubgraphTransformation as SubgraphTransformation
    from deeploy_core.platform import Engine as Engine
    from deeploy_core.platform import Platform as Platform
    from deeploy_core.platform import RuntimeLibrary as RuntimeLibrary
    from deeploy_core.platform import StaticPlacement as StaticPlacement
    from deeploy_core.platform.verification import OpVerification as OpVerification
    from deeploy_core.platform.board import BoardSupport as BoardSupport
    from deeploy_core.mapping.external_library import ExternalLibrary as ExternalLibrary
    from deeploy_core.mapping.kernel_runtime import KernelRuntime as KernelRuntime
    from deeploy_core.plugins.installed_platforms import installed_platform as installed_platform
    from deeploy_core.mapping import tflite_parameters as tflite_parameters
    from deeploy_core.tiling import geometry as _geometry
    from deeploy_core.tiling import transfers as _transfers
    from deeploy_core.tiling.geometry import AlongAxes as AlongAxes
    from deeploy_core.tiling.geometry import ChannelParameters as ChannelParameters
    from deeploy_core.tiling.geometry import Elementwise as Elementwise
    from deeploy_core.tiling.geometry import Extent as Extent
    from deeploy_core.tiling.geometry import SlidingWindow as SlidingWindow
    from deeploy_core.tiling.geometry import TileConstraint as TileConstraint
    from deeploy_core.tiling.parallel import ClusterParallelism as ClusterParallelism
    from deeploy_core.tiling.transfers import TransferPrimitives as TransferPrimitives
    from deeploy_core.tiling.view import TilingView as TilingView

    # Values and type aliases, each documented here (the page of this module shows these docstrings).
    dtypes = _element_types.dtypes
    """The element types, one attribute each: ``dtypes.FLOAT32``, ``dtypes.INT8``, ``dtypes.INT64``, ...

    :meta hide-value:
    """
    OperatorRepresentation: TypeAlias = _parser.OperatorRepresentation
    """What a :class:`NodeParser` returns and a :class:`NodeTemplate` is filled with: names to values."""
    Box: TypeAlias = _geometry.Box
    """A region of a tensor: one half-open ``(start, stop)`` range per axis (how constraints and tiles describe
    tiles)."""
    ALIAS_MAPPERS = _ALIAS_MAPPERS
    """Mappers for the view ops (Reshape, Flatten, Squeeze, …) that cost no code: add them to a platform's engine.

    :meta hide-value:
    """
    HOST_MEMCPY = _transfers.HOST_MEMCPY
    """:class:`TransferPrimitives` of synchronous copies on the host (the generic C platform's tiled mode).

    :meta hide-value:
    """


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name as ``Any``

    def __getattr__(name: str) -> Any:
        """Import a lazily exported name from its home on first access (PEP 562) and keep it here for the next."""
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    """The public names, so that ``dir()`` and completion show what ``__all__`` promises."""
    return sorted(set(globals()) | set(__all__))


__all__ = [*_EAGER, *_HOMES]
