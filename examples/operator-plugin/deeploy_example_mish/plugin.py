"""Registers ONNX ``Mish`` on the generic C and the PULP cluster platforms.

Nothing heavy is imported here: the mapper (and the tile constraint) are made
by functions the core calls only when a network uses the op.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from deeploy_core.plugin_api import OperatorExtension, OperatorNumerics, hookimpl

if TYPE_CHECKING:
    from deeploy_core.plugin_api import NodeMapper, TileConstraint

DEEPLOY_CORE_API = "2.0"
"""The plugin API version this plugin is written for: a core of another major refuses it."""
VERSION = "0.1.0"
PLATFORMS = ("generic-c", "pulp-cluster")
RUNTIME = Path(__file__).resolve().parent / "runtime"


def make_mapper() -> NodeMapper:
    from deeploy_example_mish.kernel import mish_mapper

    return mish_mapper()


def elementwise() -> TileConstraint:
    """Every output axis may be cut, and a tile reads the same box of its input."""
    from deeploy_core.plugin_api import Elementwise

    return Elementwise()


@hookimpl
def register_operators(register: Callable[[OperatorExtension], None]) -> None:
    for platform in PLATFORMS:
        register(OperatorExtension(
            name=f"{platform}.mish", platform=platform, op_type="Mish", factory=make_mapper, version=VERSION,
            tile_constraint=elementwise, sources=(RUNTIME / "src" / "dcx_mish.c",),
            include_dirs=(RUNTIME / "include",), numerics=OperatorNumerics.FLOAT_TOLERANCE,
            description="Mish (x * tanh(softplus(x))) in float32, element-wise, tiled on any axis"))
