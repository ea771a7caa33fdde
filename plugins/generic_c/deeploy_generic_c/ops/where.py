"""Where(condition, X, Y) for values of any element type, the three operands broadcast together (numpy)."""

from __future__ import annotations

from collections.abc import Sequence

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import DataType, NodeMapper, dtypes
from deeploy_generic_c.kernels.typed import EVERY, shared_type
from deeploy_generic_c.parsing.typed_parser import TypedElementwiseParser, typed_mapper

NODE_TESTED = ("Where",)


class WhereParser(TypedElementwiseParser):
    """A bool condition chooses between X and Y element by element."""

    inputs = (3, 3)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        condition, x, y = values
        return f"{condition} != 0 ? {x} : {y}"


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Where": typed_mapper(WhereParser(), shared_type(EVERY, leading=(dtypes.BOOL,)), "Where any type"),
}
