"""Toy operator extensions over the C kernels of ``tests/operator_plugin_kernels``, and a plugin that registers them.

:class:`OperatorPlugin` registers the extensions it is given, in order; :func:`unary_mapper` maps a one-input op to
one of the kernels (``dct_relu_f32``, ``dct_bitwise_not_i8``), and :func:`bitwise_not_extension` is the BitwiseNot
operator a plugin adds to a platform.  ``tests/test_operator_plugins.py`` uses them directly and in the conformance
suite it runs through pytester, which imports them from here instead of from a copy of the test module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.extensions import OperatorExtension, OperatorNumerics
from deeploy_core.hookspecs import hookimpl
from deeploy_core.ir import NetworkContext
from deeploy_core.ir.dtypes import FLOAT32, INT8
from deeploy_core.mapping import (
    NodeBinding,
    NodeMapper,
    NodeMismatch,
    NodeParser,
    NodeTemplate,
    NodeTypeChecker,
    OperatorRepresentation,
)
from deeploy_core.tiling.geometry import Elementwise

KERNELS = Path(__file__).resolve().parents[1] / "operator_plugin_kernels"
SOURCES = (KERNELS / "dct_test_ops.c",)
TEMPLATE = NodeTemplate("${function}(${X}, ${Y}, ${size});", headers=("dct_test_ops.h",))


class UnaryParser(NodeParser):
    """One dense input, one dense output of any shape (or, with ``refuse``, no node at all)."""

    def __init__(self, function: str, refuse: bool = False) -> None:
        self.function = function
        self.refuse = refuse

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        if self.refuse:
            raise NodeMismatch("attribute", "this variant refuses every node")
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        return {"function": self.function, "X": x.c_name, "Y": y.c_name, "size": y.numel}


def unary_mapper(name: str, function: str = "dct_relu_f32", dtype: Any = FLOAT32, refuse: bool = False) -> NodeMapper:
    """A mapper named ``name`` calling the kernel ``function`` on ``dtype`` (with ``refuse``, matching no node)."""
    checker = NodeTypeChecker((dtype,), (dtype,))
    return NodeMapper(UnaryParser(function, refuse), (NodeBinding(checker, TEMPLATE),), name=name)


class OperatorPlugin:
    """A plugin registering the operator extensions it is given, in that order."""

    def __init__(self, *extensions: OperatorExtension) -> None:
        self.extensions = extensions

    @hookimpl
    def register_operators(self, register: Any) -> None:
        for extension in self.extensions:
            register(extension)


def bitwise_not_extension(platform: str, tile_constraint: Any = Elementwise, name: str = "") -> OperatorExtension:
    """BitwiseNot on int8 for ``platform``, computed exactly by ``dct_bitwise_not_i8``."""
    return OperatorExtension(
        name=name or f"{platform}.bitwise-not", platform=platform, op_type="BitwiseNot",
        factory=lambda: unary_mapper("BitwiseNot int8 (test plugin)", "dct_bitwise_not_i8", INT8),
        tile_constraint=tile_constraint, sources=SOURCES, include_dirs=(KERNELS,), numerics=OperatorNumerics.EXACT,
        description="BitwiseNot on int8 (test plugin)")
