"""Col2Im (float32, float64): sliding blocks summed back into an image of any number of spatial axes.

The inverse of im2col: input ``[N, C * prod(block), L]`` holds, for every
block position ``l`` (row-major over the positions a sliding window with the
strides, dilations and pads takes), the block's ``prod(block)`` elements per
channel; each is added to the image element it covers (elements that fall in
the padding are dropped).  With constant image and block shapes every bound
is a literal: one loop per block element and per block position, as ONNX's
reference nests them, so overlapping blocks add up in its order.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import single_binding

NODE_TESTED = ("Col2Im",)


def _constant_ints(ctxt: NetworkContext, node: gs.Node, index: int, what: str) -> list[int]:
    values = ctxt[node.inputs[index].name].values
    if values is None:
        raise NodeMismatch("shape", f"{what} must be a constant")
    return [int(v) for v in np.asarray(values).reshape(-1)]


def col2im_code(x: str, y: str, c_type: str, planes: int, image: list[int], block: list[int], strides: list[int],
                dilations: list[int], pads_begin: list[int], positions: list[int]) -> str:
    """The C statements: ``planes`` (batch times channels) images, each zeroed and then summed into."""
    rank = len(image)
    image_size, block_size, count = math.prod(image), math.prod(block), math.prod(positions)
    image_strides = [math.prod(image[axis + 1:]) for axis in range(rank)]
    lines = ["{", f"    const {c_type} *dcg_ci_x = (const {c_type} *){x};", f"    {c_type} *dcg_ci_y = ({c_type} *){y};",
             f"    for (int32_t i = 0; i < {planes * image_size}; ++i) dcg_ci_y[i] = 0;",
             f"    for (int32_t p = 0; p < {planes}; ++p) {{",
             f"        const {c_type} *col = dcg_ci_x + p * {block_size * count};",
             f"        {c_type} *img = dcg_ci_y + p * {image_size};",
             "        int32_t k = 0;"]
    depth = 2
    for axis in range(rank):
        lines.append("    " * depth + f"for (int32_t k{axis} = 0; k{axis} < {block[axis]}; ++k{axis}) {{")
        depth += 1
    lines.append("    " * depth + "int32_t l = 0;")
    for axis in range(rank):
        indent = "    " * depth
        lines.append(f"{indent}for (int32_t b{axis} = 0; b{axis} < {positions[axis]}; ++b{axis}) {{")
        lines.append(f"{indent}    const int32_t h{axis} = b{axis} * {strides[axis]} - {pads_begin[axis]} + "
                     f"k{axis} * {dilations[axis]};")
        depth += 1
    indent = "    " * depth
    inside = " && ".join(f"h{axis} >= 0 && h{axis} < {image[axis]}" for axis in range(rank))
    at = " + ".join(f"h{axis} * {image_strides[axis]}" for axis in range(rank))
    lines.append(f"{indent}if ({inside}) img[{at}] += col[k * {count} + l];")
    lines.append(f"{indent}++l;")
    for _ in range(rank):
        depth -= 1
        lines.append("    " * depth + "}")
    lines.append("    " * depth + "++k;")
    for _ in range(rank):
        depth -= 1
        lines.append("    " * depth + "}")
    lines += ["    }", "}"]
    return "\n".join(lines)


class Col2ImParser(NodeParser):
    """Constant image_shape and block_shape, any number of spatial axes; strides, dilations, pads."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        if x.dtype != y.dtype:
            raise NodeMismatch("dtype", f"output type {y.dtype} differs from input type {x.dtype}")
        image = _constant_ints(ctxt, node, 1, "image_shape")
        block = _constant_ints(ctxt, node, 2, "block_shape")
        rank = len(image)
        strides = [int(v) for v in NodeParser.attribute(node, "strides", None) or [1] * rank]
        dilations = [int(v) for v in NodeParser.attribute(node, "dilations", None) or [1] * rank]
        pads = [int(v) for v in NodeParser.attribute(node, "pads", None) or [0] * (2 * rank)]
        if len(block) != rank or len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
            raise NodeMismatch("attribute", f"image_shape has {rank} axes; block_shape, strides, dilations and pads "
                                            "must match it")
        if len(x.shape) != 3:
            raise NodeMismatch("shape", f"the input has rank {len(x.shape)}, Col2Im takes [N, C * block, L]")
        positions = [(image[a] + pads[a] + pads[a + rank] - (dilations[a] * (block[a] - 1) + 1)) // strides[a] + 1
                     for a in range(rank)]
        batch, rows, count = x.shape
        block_size = math.prod(block)
        if min(positions, default=1) < 1 or count != math.prod(positions) or rows % block_size:
            raise NodeMismatch("shape", f"input {list(x.shape)} does not hold blocks {block} at {positions} positions")
        planes = batch * (rows // block_size)
        if tuple(y.shape) != (batch, rows // block_size, *image):
            raise NodeMismatch("shape", f"the output has shape {list(y.shape)}, expected "
                                        f"{[batch, rows // block_size, *image]}")
        if y.numel == 0:
            return {"call": "", "size": 0}
        code = col2im_code(x.c_name, y.c_name, x.dtype.c_type, planes, image, block, strides, dilations,
                           pads[:rank], positions)
        return {"call": code, "size": x.numel}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Col2Im": tuple(mapper for dtype in (dtypes.FLOAT32, dtypes.FLOAT64) for mapper in single_binding(
        Col2ImParser(), NodeTypeChecker((dtype, dtypes.INT64, dtypes.INT64), (dtype,)), f"Col2Im {dtype}")),
}
