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
    module-level ``DEEPLOY_CORE_API = "1.0"`` in the plugin module (or a class
    attribute, when the entry point names a class or instance)::

        DEEPLOY_CORE_API = "1.0"

    The host compares majors only: a plugin declaring another major (``"2.0"``
    on a 1.x core) is not loaded — ``deeploy-core plugins`` lists it as
    ``failed`` with a reason naming both versions — while any minor of the same
    major is accepted (a name newer than this core then fails the plugin's
    import, which is reported the same way).  A plugin without the constant is
    loaded as before: declaring is optional, but only a declared plugin is
    refused cleanly instead of failing somewhere inside its code.  A value that
    is not ``"MAJOR.MINOR"`` fails the plugin with a reason saying so.

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
from deeploy_core.errors import PluginError as PluginError
from deeploy_core.extensions import AllocatorExtension as AllocatorExtension
from deeploy_core.extensions import CodeTransformationExtension as CodeTransformationExtension
from deeploy_core.extensions import Extension as Extension
from deeploy_core.extensions import MemoryLevelExtension as MemoryLevelExtension
from deeploy_core.extensions import OperatorExtension as OperatorExtension
from deeploy_core.extensions import OperatorNumerics as OperatorNumerics
from deeploy_core.extensions import PlatformExtension as PlatformExtension
from deeploy_core.extensions import TilerExtension as TilerExtension
from deeploy_core.extensions import TransformationPoint as TransformationPoint
from deeploy_core.options import OptionSpec as OptionSpec
from deeploy_core.options import level_size_options as level_size_options
from deeploy_core import hookspecs as _hookspecs
from deeploy_core import plugin_api_version as _version

API_VERSION = _version.API_VERSION
"""The version of this API, ``"MAJOR.MINOR"``: a plugin declaring another major in ``DEEPLOY_CORE_API`` is refused."""

hookimpl = _hookspecs.hookimpl
"""Marks a plugin's function (or method) as the implementation of the hook of the same name (see :doc:`hooks`).

:meta hide-value:
"""

if TYPE_CHECKING:  # the lazily imported names below, for type checkers (and readers)
    from typing import TypeAlias

    from deeploy_core.allocation import AllocationBlock as AllocationBlock
    from deeploy_core.allocation import AllocationProblem as AllocationProblem
    from deeploy_core.allocation import AllocationSolution as AllocationSolution
    from deeploy_core.allocation import FirstFitAllocator as FirstFitAllocator
    from deeploy_core.allocation import FixedOrder as FixedOrder
    from deeploy_core.allocation import ModelBlock as ModelBlock
    from deeploy_core.allocation import ModelPlacement as ModelPlacement
    from deeploy_core.allocation import TilingModelAllocator as TilingModelAllocator
    from deeploy_core.allocation import stack_in_order as stack_in_order
    from deeploy_core.codegen.execution_block import CodeTransformation as CodeTransformation
    from deeploy_core.codegen.execution_block import ExecutionBlock as ExecutionBlock
    from deeploy_core.codegen.literals import c_array_values as c_array_values
    from deeploy_core.compilation import Compilation as Compilation
    from deeploy_core.compilation import Results as Results
    from deeploy_core.deployer import Deployer as Deployer
    from deeploy_core.deployer import DeployerWrapper as DeployerWrapper
    from deeploy_core.frontend.custom_ops import CustomOpSchema as CustomOpSchema
    from deeploy_core.ir import Buffer as Buffer
    from deeploy_core.ir import BufferKind as BufferKind
    from deeploy_core.ir import DataType as DataType
    from deeploy_core.ir import NetworkContext as NetworkContext
    from deeploy_core.ir import dtypes as _dtypes
    from deeploy_core.mapping import Layer as Layer
    from deeploy_core.mapping import NodeBinding as NodeBinding
    from deeploy_core.mapping import NodeMapper as NodeMapper
    from deeploy_core.mapping import NodeMismatch as NodeMismatch
    from deeploy_core.mapping import NodeParser as NodeParser
    from deeploy_core.mapping import NodeTemplate as NodeTemplate
    from deeploy_core.mapping import NodeTypeChecker as NodeTypeChecker
    from deeploy_core.mapping import attribute as attribute
    from deeploy_core.mapping import constant_values as constant_values
    from deeploy_core.mapping import is_present as is_present
    from deeploy_core.mapping import parser as _parser
    from deeploy_core.mapping.alias import ALIAS_MAPPERS as _ALIAS_MAPPERS
    from deeploy_core.memory import MemoryHierarchy as MemoryHierarchy
    from deeploy_core.memory import MemoryLevel as MemoryLevel
    from deeploy_core.memory.wrapper import MemoryLevelDeployerWrapper as MemoryLevelDeployerWrapper
    from deeploy_core.memory import load_hierarchy as load_hierarchy
    from deeploy_core.network import GeneratedNetwork as GeneratedNetwork
    from deeploy_core.network import NetworkDeployer as NetworkDeployer
    from deeploy_core.passes import Modifies as Modifies
    from deeploy_core.passes import OpChainPattern as OpChainPattern
    from deeploy_core.passes import Pass as Pass
    from deeploy_core.passes import Pipeline as Pipeline
    from deeploy_core.passes import Subgraph as Subgraph
    from deeploy_core.passes import SubgraphTransformation as SubgraphTransformation
    from deeploy_core.passes import VisitorPass as VisitorPass
    from deeploy_core.platform import Engine as Engine
    from deeploy_core.platform import Platform as Platform
    from deeploy_core.platform import RuntimeLibrary as RuntimeLibrary
    from deeploy_core.platform import StaticPlacement as StaticPlacement
    from deeploy_core.platform.verification import OpVerification as OpVerification
    from deeploy_core.tiling import geometry as _geometry
    from deeploy_core.tiling import transfers as _transfers
    from deeploy_core.tiling.codegen import LayerLayout as LayerLayout
    from deeploy_core.tiling.strides import element_strides as element_strides
    from deeploy_core.tiling.geometry import AlongAxes as AlongAxes
    from deeploy_core.tiling.geometry import ChannelParameters as ChannelParameters
    from deeploy_core.tiling.geometry import Concatenation as Concatenation
    from deeploy_core.tiling.geometry import Elementwise as Elementwise
    from deeploy_core.tiling.geometry import Extent as Extent
    from deeploy_core.tiling.geometry import GlobalPool as GlobalPool
    from deeploy_core.tiling.geometry import MatrixProduct as MatrixProduct
    from deeploy_core.tiling.geometry import Permutation as Permutation
    from deeploy_core.tiling.geometry import SlidingWindow as SlidingWindow
    from deeploy_core.tiling.geometry import TileConstraint as TileConstraint
    from deeploy_core.tiling.parallel import ClusterParallelism as ClusterParallelism
    from deeploy_core.tiling.parallel import LayerSplit as LayerSplit
    from deeploy_core.tiling.solution import LayerTiling as LayerTiling
    from deeploy_core.tiling.solution import TilingSolution as TilingSolution
    from deeploy_core.tiling.outer_level import OuterLevelPlacement as OuterLevelPlacement
    from deeploy_core.tiling.staging import LayerStaging as LayerStaging
    from deeploy_core.tiling.state import TilingState as TilingState
    from deeploy_core.tiling.tiles import Tile as Tile
    from deeploy_core.tiling.tiles import TiledLayer as TiledLayer
    from deeploy_core.tiling.tiles import Variant as Variant
    from deeploy_core.tiling.tiles import box_shape as box_shape
    from deeploy_core.tiling.transfers import TransferPrimitives as TransferPrimitives

    # Values and type aliases, each documented here (the page of this module shows these docstrings).
    FLOAT32 = _dtypes.FLOAT32
    """``float``: 32-bit IEEE float, the type of float networks."""
    FLOAT64 = _dtypes.FLOAT64
    """``double``: 64-bit IEEE float."""
    INT8 = _dtypes.INT8
    """``int8_t``: the activations and weights of integer (quantized) networks."""
    UINT8 = _dtypes.UINT8
    """``uint8_t``: unsigned 8-bit integers (e.g. activations after a ReLU in QDQ networks)."""
    INT16 = _dtypes.INT16
    """``int16_t``."""
    UINT16 = _dtypes.UINT16
    """``uint16_t``."""
    INT32 = _dtypes.INT32
    """``int32_t``: accumulators, biases and requantization multipliers of integer kernels."""
    UINT32 = _dtypes.UINT32
    """``uint32_t``."""
    INT64 = _dtypes.INT64
    """``int64_t``: ONNX's index type (shapes, axes, Gather indices)."""
    UINT64 = _dtypes.UINT64
    """``uint64_t``."""
    BOOL = _dtypes.BOOL
    """ONNX ``bool``, stored as one ``uint8_t`` per element."""
    OperatorRepresentation: TypeAlias = _parser.OperatorRepresentation
    """What a :class:`NodeParser` returns and a :class:`NodeTemplate` is filled with: names to values."""
    Range: TypeAlias = _geometry.Range
    """A half-open range ``(start, stop)`` of one axis."""
    Box: TypeAlias = _geometry.Box
    """A region of a tensor: one :data:`Range` per axis (how tile constraints and tiles describe tiles)."""
    ALIAS_MAPPERS = _ALIAS_MAPPERS
    """Mappers for the view ops (Reshape, Flatten, Squeeze, …) that cost no code: add them to a platform's engine.

    :meta hide-value:
    """
    HOST_MEMCPY = _transfers.HOST_MEMCPY
    """:class:`TransferPrimitives` of synchronous copies on the host (the generic C platform's tiled mode).

    :meta hide-value:
    """

_HOMES: dict[str, str] = {
    # data types and buffers
    "Buffer": "deeploy_core.ir",
    "BufferKind": "deeploy_core.ir",
    "DataType": "deeploy_core.ir",
    "NetworkContext": "deeploy_core.ir",
    "FLOAT32": "deeploy_core.ir.dtypes",
    "FLOAT64": "deeploy_core.ir.dtypes",
    "INT8": "deeploy_core.ir.dtypes",
    "UINT8": "deeploy_core.ir.dtypes",
    "INT16": "deeploy_core.ir.dtypes",
    "UINT16": "deeploy_core.ir.dtypes",
    "INT32": "deeploy_core.ir.dtypes",
    "UINT32": "deeploy_core.ir.dtypes",
    "INT64": "deeploy_core.ir.dtypes",
    "UINT64": "deeploy_core.ir.dtypes",
    "BOOL": "deeploy_core.ir.dtypes",
    # operators: parser, type checker, template, binding, mapper, layer
    "Layer": "deeploy_core.mapping",
    "NodeBinding": "deeploy_core.mapping",
    "NodeMapper": "deeploy_core.mapping",
    "NodeMismatch": "deeploy_core.mapping",
    "NodeParser": "deeploy_core.mapping",
    "NodeTemplate": "deeploy_core.mapping",
    "NodeTypeChecker": "deeploy_core.mapping",
    "OperatorRepresentation": "deeploy_core.mapping.parser",
    "attribute": "deeploy_core.mapping",
    "constant_values": "deeploy_core.mapping",
    "is_present": "deeploy_core.mapping",
    "ALIAS_MAPPERS": "deeploy_core.mapping.alias",
    "CustomOpSchema": "deeploy_core.frontend.custom_ops",
    # tile geometry
    "Range": "deeploy_core.tiling.geometry",
    "Box": "deeploy_core.tiling.geometry",
    "Extent": "deeploy_core.tiling.geometry",
    "TileConstraint": "deeploy_core.tiling.geometry",
    "Elementwise": "deeploy_core.tiling.geometry",
    "ChannelParameters": "deeploy_core.tiling.geometry",
    "SlidingWindow": "deeploy_core.tiling.geometry",
    "GlobalPool": "deeploy_core.tiling.geometry",
    "MatrixProduct": "deeploy_core.tiling.geometry",
    "AlongAxes": "deeploy_core.tiling.geometry",
    "Permutation": "deeploy_core.tiling.geometry",
    "Concatenation": "deeploy_core.tiling.geometry",
    # memory levels
    "MemoryHierarchy": "deeploy_core.memory",
    "MemoryLevel": "deeploy_core.memory",
    "MemoryLevelDeployerWrapper": "deeploy_core.memory.wrapper",
    "load_hierarchy": "deeploy_core.memory",
    # platform data
    "Platform": "deeploy_core.platform",
    "Engine": "deeploy_core.platform",
    "RuntimeLibrary": "deeploy_core.platform",
    "StaticPlacement": "deeploy_core.platform",
    "OpVerification": "deeploy_core.platform.verification",
    "TransferPrimitives": "deeploy_core.tiling.transfers",
    "HOST_MEMCPY": "deeploy_core.tiling.transfers",
    "ClusterParallelism": "deeploy_core.tiling.parallel",
    # static allocation
    "AllocationBlock": "deeploy_core.allocation",
    "AllocationProblem": "deeploy_core.allocation",
    "AllocationSolution": "deeploy_core.allocation",
    "FirstFitAllocator": "deeploy_core.allocation",
    "ModelBlock": "deeploy_core.allocation",
    "ModelPlacement": "deeploy_core.allocation",
    "FixedOrder": "deeploy_core.allocation",
    "TilingModelAllocator": "deeploy_core.allocation",
    "stack_in_order": "deeploy_core.allocation",
    # graph passes
    "Pass": "deeploy_core.passes",
    "Pipeline": "deeploy_core.passes",
    "Modifies": "deeploy_core.passes",
    "VisitorPass": "deeploy_core.passes",
    "OpChainPattern": "deeploy_core.passes",
    "Subgraph": "deeploy_core.passes",
    "SubgraphTransformation": "deeploy_core.passes",
    # deployers
    "Deployer": "deeploy_core.deployer",
    "DeployerWrapper": "deeploy_core.deployer",
    "NetworkDeployer": "deeploy_core.network",
    "GeneratedNetwork": "deeploy_core.network",
    # compile state
    "Compilation": "deeploy_core.compilation",
    "Results": "deeploy_core.compilation",
    "TilingSolution": "deeploy_core.tiling.solution",
    "LayerTiling": "deeploy_core.tiling.solution",
    "TilingState": "deeploy_core.tiling.state",
    "OuterLevelPlacement": "deeploy_core.tiling.outer_level",
    "LayerStaging": "deeploy_core.tiling.staging",
    "TiledLayer": "deeploy_core.tiling.tiles",
    "Tile": "deeploy_core.tiling.tiles",
    "Variant": "deeploy_core.tiling.tiles",
    "box_shape": "deeploy_core.tiling.tiles",
    "LayerLayout": "deeploy_core.tiling.codegen",
    "element_strides": "deeploy_core.tiling.strides",
    "LayerSplit": "deeploy_core.tiling.parallel",
    # code generation
    "ExecutionBlock": "deeploy_core.codegen.execution_block",
    "CodeTransformation": "deeploy_core.codegen.execution_block",
    "c_array_values": "deeploy_core.codegen.literals",
}
"""Where each lazily exported name lives; imported on first access so that loading a plugin stays cheap."""


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


__all__ = [
    # contract, hook marker, descriptors, their options and errors (imported with the module)
    "API_VERSION",
    "hookimpl",
    "Extension",
    "PlatformExtension",
    "MemoryLevelExtension",
    "TilerExtension",
    "AllocatorExtension",
    "CodeTransformationExtension",
    "TransformationPoint",
    "OperatorExtension",
    "OperatorNumerics",
    "OptionSpec",
    "level_size_options",
    "DeeployError",
    "PluginError",
    # data types and buffers
    "Buffer", "BufferKind", "DataType", "NetworkContext", "FLOAT32", "FLOAT64", "INT8", "UINT8", "INT16", "UINT16",
    "INT32", "UINT32", "INT64", "UINT64", "BOOL",
    # operators: parser, type checker, template, binding, mapper, layer
    "Layer", "NodeBinding", "NodeMapper", "NodeMismatch", "NodeParser", "NodeTemplate", "NodeTypeChecker",
    "OperatorRepresentation", "attribute", "constant_values", "is_present", "ALIAS_MAPPERS",
    # output types and shapes of ops without an ONNX schema (Platform.custom_ops, OperatorExtension.schema)
    "CustomOpSchema",
    # tile geometry
    "Range", "Box", "Extent", "TileConstraint", "Elementwise", "ChannelParameters", "SlidingWindow", "GlobalPool",
    "MatrixProduct", "AlongAxes", "Permutation", "Concatenation",
    # memory levels
    "MemoryHierarchy", "MemoryLevel", "MemoryLevelDeployerWrapper", "load_hierarchy",
    # platform data
    "Platform", "Engine", "RuntimeLibrary", "StaticPlacement", "OpVerification", "TransferPrimitives", "HOST_MEMCPY",
    "ClusterParallelism",
    # static allocation
    "AllocationBlock", "AllocationProblem", "AllocationSolution", "FirstFitAllocator", "ModelBlock",
    "ModelPlacement", "FixedOrder", "TilingModelAllocator", "stack_in_order",
    # graph passes
    "Pass", "Pipeline", "Modifies", "VisitorPass", "OpChainPattern", "Subgraph", "SubgraphTransformation",
    # deployers
    "Deployer", "DeployerWrapper", "NetworkDeployer", "GeneratedNetwork",
    # compile state
    "Compilation", "Results", "TilingSolution", "LayerTiling", "TilingState", "TiledLayer", "Tile", "Variant",
    "box_shape", "LayerLayout", "element_strides", "LayerSplit", "OuterLevelPlacement", "LayerStaging",
    # code generation
    "ExecutionBlock", "CodeTransformation", "c_array_values",
]
