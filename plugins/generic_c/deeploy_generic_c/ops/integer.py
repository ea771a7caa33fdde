"""Integer kernels in the raw integer domain (Deeploy's integer dialect and integer versions of ONNX ops).

The loops are emitted inline with the exact C types of their operands, so one
template serves every combination of int8/uint8/int16/int32 inputs; all
arithmetic is promoted to int32 (int64 where a product could overflow), as
``deeploy-op-semantics.md`` specifies.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import broadcast_strides, collapse_broadcast
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.kernels import dot_rows as dot_rows
from deeploy_generic_c.kernels import matmul_rows as matmul_rows
from deeploy_generic_c.parsing.window import sliding_window
from deeploy_generic_c.kernels.requantisation import Requantisation, restrict_parameters, scalar_value
from deeploy_generic_c.parsing.integer_bindings import ANY, INLINE, integer_mapper, require_integer_operand


class IntegerBinaryParser(NodeParser):
    """Add, Sub, Mul with an integer operand, numpy broadcasting.

    Integer × integer is exact in int32; integer × float (a dequantisation
    ``(q - zp) * scale``) converts the integer to float32 and computes in float32.
    """

    inputs = (2, 2)
    SYMBOLS = {"Add": "+", "Sub": "-", "Mul": "*"}

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        if a.dtype.is_float and b.dtype.is_float:
            raise NodeMismatch("dtype", "both inputs are float; the integer kernel needs an integer operand")
        shape, strides = collapse_broadcast(y.shape, [broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)])
        symbol = self.SYMBOLS[node.op]
        work = "float" if y.dtype.is_float else "int32_t"
        body = f"{y.c_name}[y] = ({y.dtype.c_type})(({work}){a.c_name}[o0] {symbol} ({work}){b.c_name}[o1]);"
        return {"code": offset_loops(shape, strides, body), "size": y.numel}


class RequantShiftParser(NodeParser):
    """y = clamp((x*mul + add + 2^(s-1)) >> s); mul/add scalar or per channel along axis 1."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        channels = x.shape[1] if len(x.shape) > 1 else 1
        requant = Requantisation(node, ctxt, node.inputs[1].name, node.inputs[2].name, channels)
        outer = x.shape[0] if len(x.shape) > 1 else 1
        inner = math.prod(x.shape[2:]) if len(x.shape) > 1 else x.numel
        store = requant.store(f"{y.c_name}[base + i]", y.dtype.c_type, f"{x.c_name}[base + i]", "c")
        code = f"""for (int32_t n = 0; n < {outer}; ++n) {{
    for (int32_t c = 0; c < {channels}; ++c) {{
        const int32_t base = (n * {channels} + c) * {inner};
        for (int32_t i = 0; i < {inner}; ++i) {store}
    }}
}}"""
        return {"code": code, "size": x.numel * 3, "requantization": requant.describe()}


class IntegerGemmParser(NodeParser):
    """Y = alpha*op(A)@op(B) + beta*C over integers (alpha, beta as integers), int32 out."""

    inputs = (2, 3)
    requantised = False
    requant_inputs: tuple[int, int] = (-2, -1)
    """Positions of the requantisation's (mul, add) inputs; Deeploy's RQGemm/RQMatMul put add first."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        operands = list(node.inputs[:-2]) if self.requantised else list(node.inputs)
        a, b, y = ctxt[operands[0].name], ctxt[operands[1].name], ctxt[node.outputs[0].name]
        require_integer_operand(a, "input A")
        require_integer_operand(b, "input B")
        trans_a, trans_b = int(NodeParser.attribute(node, "transA", 0)), int(NodeParser.attribute(node, "transB", 0))
        m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
        n = b.shape[0] if trans_b else b.shape[1]
        alpha, beta = int(NodeParser.attribute(node, "alpha", 1.0)), int(NodeParser.attribute(node, "beta", 1.0))
        a_index = f"kk * {m} + i" if trans_a else f"i * {k} + kk"
        b_index = f"j * {k} + kk" if trans_b else f"kk * {n} + j"
        cbuf = ctxt[operands[2].name] if len(operands) > 2 and operands[2].name else None

        def bias_of(i: str, j: str, name: str | None = None) -> str:
            """beta * C[i, j] with C broadcast over rows and/or columns (C read through ``name`` if given)."""
            if cbuf is None:
                return "0"
            rows, cols = ((1,) * (2 - len(cbuf.shape)) + tuple(cbuf.shape))[-2:]
            return (f"{beta} * (int32_t){name or cbuf.c_name}"
                    f"[{i if rows != 1 else '0'} * {cols} + {j if cols != 1 else '0'}]")

        bias = bias_of("i", "j")
        target = f"{y.c_name}[i * {n} + j]"
        requant = None
        if self.requantised:
            mul, add = self.requant_inputs
            requant = Requantisation(node, ctxt, node.inputs[mul].name, node.inputs[add].name, n)
        extra: dict[str, object] = {"requantization": requant.describe()} if requant is not None else {}
        row_product = not trans_b and matmul_rows.applies(a, b, ctxt.for_tiles)
        row_dot = trans_b and not trans_a and dot_rows.applies(a, b, k, ctxt.for_tiles)
        if row_product or row_dot:
            c_max = matmul_rows.largest_value(cbuf)
            bound = (None if c_max is None else
                     abs(alpha) * matmul_rows.product_bound(a, b, k) + abs(beta) * c_max)

            def fast_store(target: str, acc: str, i: str, j: str) -> str:
                """The epilogue both fast kernels write per output: alpha, bias, then requantise or cast."""
                total = f"{alpha} * {acc} + {bias_of(i, j, 'dc_bias')}"
                if requant is None:
                    return f"{target} = ({y.dtype.c_type})({total});"
                return requant.store(target, y.dtype.c_type, total, j, bound, Requantisation.RESTRICT_NAMES)

            parameters = restrict_parameters(requant, cbuf)
            if row_product:
                product = matmul_rows.MatrixProduct(m, n, k, a, b, y, "0", "0", "0", bool(trans_a), fast_store,
                                                    parameters)
                code, kind = matmul_rows.kernel(product), product.kind
            else:
                code, kind = dot_rows.kernel(dot_rows.RowDotProduct(m, n, k, a, b, y, fast_store, parameters)), "row_dot"
            return {"code": code, "matmul_kernel": kind, "macs": m * n * k, "size": y.numel, **extra}
        if requant is not None:
            store = requant.store(target, y.dtype.c_type, f"{alpha} * acc + {bias}", "j")
        else:
            store = f"{target} = ({y.dtype.c_type})({alpha} * acc + {bias});"
        code = f"""for (int32_t i = 0; i < {m}; ++i) {{
    for (int32_t j = 0; j < {n}; ++j) {{
        int32_t acc = 0;
        for (int32_t kk = 0; kk < {k}; ++kk) acc += (int32_t){a.c_name}[{a_index}] * (int32_t){b.c_name}[{b_index}];
        {store}
    }}
}}"""
        return {"code": code, "macs": m * n * k, "size": y.numel, **extra}


class IntegerMatMulParser(NodeParser):
    """numpy matmul over integers with broadcast batch dimensions, int32 out."""

    inputs = (2, 2)
    requantised = False
    requant_inputs: tuple[int, int] = (-2, -1)
    """Positions of the requantisation's (mul, add) inputs (see :class:`IntegerGemmParser`)."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        operands = list(node.inputs[:-2]) if self.requantised else list(node.inputs)
        a, b, y = ctxt[operands[0].name], ctxt[operands[1].name], ctxt[node.outputs[0].name]
        require_integer_operand(a, "input A")
        require_integer_operand(b, "input B")
        if len(a.shape) < 2 or len(b.shape) < 2:
            raise NodeMismatch("shape", "1-D integer MatMul operands are not supported")
        m, k = a.shape[-2:]
        n = b.shape[-1]
        batch = tuple(y.shape[:-2])
        shape, (a_strides, b_strides) = collapse_broadcast(
            batch or (1,), [broadcast_strides(a.shape[:-2], batch or (1,)), broadcast_strides(b.shape[:-2], batch or (1,))]
        )
        bias = "0"
        bias_buffer = ctxt[operands[2].name] if len(operands) > 2 else None
        if bias_buffer is not None:
            if bias_buffer.numel not in (1, n):
                raise NodeMismatch("shape", f"bias has {bias_buffer.numel} values; expected 1 or {n}")
            bias = f"(int32_t){bias_buffer.c_name}[{'j' if bias_buffer.numel > 1 else '0'}]"
        target = f"{y.c_name}[y * {m * n} + i * {n} + j]"
        requant, channel = None, "j"
        if self.requantised:
            rank = len(y.shape)
            if rank == 2:
                channel, channels = "j", n
            elif rank == 3:
                channel, channels = "i", m
            else:  # axis 1 is a batch dimension; y counts batches in C order
                channel, channels = f"((y / {math.prod(batch[2:])}) % {batch[1]})", batch[1]
            mul, add = self.requant_inputs
            requant = Requantisation(node, ctxt, node.inputs[mul].name, node.inputs[add].name, channels)
        extra: dict[str, object] = {"requantization": requant.describe()} if requant is not None else {}
        macs = math.prod(batch) * m * n * k
        if matmul_rows.applies(a, b, ctxt.for_tiles):
            bias_max = matmul_rows.largest_value(bias_buffer)
            bound = None if bias_max is None else matmul_rows.product_bound(a, b, k) + bias_max

            def matmul_store(target: str, acc: str, i: str, j: str) -> str:
                if bias_buffer is not None:
                    acc = f"{acc} + (int32_t)dc_bias[{j if bias_buffer.numel > 1 else '0'}]"
                if requant is None:
                    return f"{target} = ({y.dtype.c_type})({acc});"
                return requant.store(target, y.dtype.c_type, acc, {"i": i, "j": j}.get(channel, channel), bound,
                                     Requantisation.RESTRICT_NAMES)

            product = matmul_rows.MatrixProduct(m, n, k, a, b, y, f"o0 * {m * k}", f"o1 * {k * n}", f"y * {m * n}",
                                                False, matmul_store, restrict_parameters(requant, bias_buffer))
            return {"code": offset_loops(shape, [a_strides, b_strides], matmul_rows.kernel(product)),
                    "matmul_kernel": product.kind, "macs": macs, "size": y.numel, **extra}
        if requant is not None:
            store = requant.store(target, y.dtype.c_type, "acc", channel)
        else:
            store = f"{target} = ({y.dtype.c_type})acc;"
        body = f"""for (int32_t i = 0; i < {m}; ++i) {{
    for (int32_t j = 0; j < {n}; ++j) {{
        int32_t acc = {bias};
        for (int32_t kk = 0; kk < {k}; ++kk)
            acc += (int32_t){a.c_name}[o0 * {m * k} + i * {k} + kk] * (int32_t){b.c_name}[o1 * {k * n} + kk * {n} + j];
        {store}
    }}
}}"""
        return {"code": offset_loops(shape, [a_strides, b_strides], body), "macs": macs, "size": y.numel, **extra}


class IntegerMaxPoolParser(NodeParser):
    """1-D/2-D max pooling on integers (pads ignored as -inf, dilations, any strides)."""

    outputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        if len(node.outputs) > 1 and node.outputs[1].name:
            raise NodeMismatch("shape", "the Indices output is not supported")
        win = sliding_window(node, x, y, [int(v) for v in NodeParser.attribute(node, "kernel_shape")], "pooling")
        planes, h, wd, oh, ow = win.n * win.c, win.h, win.w, win.oh, win.ow
        kernel, strides = (win.kh, win.kw), (win.stride_h, win.stride_w)
        pads, dilations = (win.pad_top, win.pad_left), (win.dil_h, win.dil_w)
        code = f"""for (int32_t p = 0; p < {planes}; ++p) {{
    for (int32_t oy = 0; oy < {oh}; ++oy) {{
        for (int32_t ox = 0; ox < {ow}; ++ox) {{
            int32_t best = INT32_MIN;
            for (int32_t ky = 0; ky < {kernel[0]}; ++ky) {{
                const int32_t iy = oy * {strides[0]} - {pads[0]} + ky * {dilations[0]};
                if (iy < 0 || iy >= {h}) continue;
                for (int32_t kx = 0; kx < {kernel[1]}; ++kx) {{
                    const int32_t ix = ox * {strides[1]} - {pads[1]} + kx * {dilations[1]};
                    if (ix < 0 || ix >= {wd}) continue;
                    const int32_t v = (int32_t){x.c_name}[(p * {h} + iy) * {wd} + ix];
                    best = v > best ? v : best;
                }}
            }}
            {y.c_name}[(p * {oh} + oy) * {ow} + ox] = ({y.dtype.c_type})best;
        }}
    }}
}}"""
        return {"code": code, "size": y.numel * kernel[0] * kernel[1]}


class IntegerReduceParser(NodeParser):
    """ReduceSum (exact, int32) and ReduceMean (Deeploy's rounding) over any axes."""

    inputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        rank = len(x.shape)
        if NodeParser.is_present(node, 1):
            values = ctxt[node.inputs[1].name].values
            if values is None:
                raise NodeMismatch("shape", "axes must be a constant")
            axes = [int(v) % rank for v in np.asarray(values).reshape(-1)]
        else:
            raw = NodeParser.attribute(node, "axes", None)
            axes = [int(v) % rank for v in ([raw] if isinstance(raw, int) else (raw or range(rank)))]
        keep = [axis for axis in range(rank) if axis not in axes]
        reduced = [axis for axis in range(rank) if axis in axes]
        strides = [math.prod(x.shape[axis + 1 :]) for axis in range(rank)]
        count = math.prod(x.shape[axis] for axis in reduced)
        keepdims = int(NodeParser.attribute(node, "keepdims", 1))
        loops_out = "".join(f"for (int32_t k{a} = 0; k{a} < {x.shape[a]}; ++k{a}) " for a in keep)
        loops_in = "".join(f"for (int32_t r{a} = 0; r{a} < {x.shape[a]}; ++r{a}) " for a in reduced)
        offset = " + ".join([f"k{a} * {strides[a]}" for a in keep] + [f"r{a} * {strides[a]}" for a in reduced]) or "0"
        if node.op == "ReduceSum":
            result = "s"
        elif keepdims == 0 and count & (count - 1) == 0:
            shift = count.bit_length() - 1
            result = f"(s + {1 << (shift - 1) if shift else 0}) >> {shift}"
        else:
            result = f"(s + (s >= 0 ? {count // 2} : -{count // 2})) / {count}"
        code = f"""{{
    int32_t out = 0;
    {loops_out}{{
        int64_t s = 0;
        {loops_in}s += {x.c_name}[{offset}];
        {y.c_name}[out++] = ({y.dtype.c_type})({result});
    }}
}}"""
        return {"code": code, "size": x.numel}


class ISoftmaxParser(NodeParser):
    """I-BERT integer softmax over the last axis (coeffA/B/C, log2, n_levels)."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        try:
            a, b, c, log2, levels = (int(scalar_value(node.attrs[name])) for name in ("coeffA", "coeffB", "coeffC", "log2", "n_levels"))
        except KeyError as missing:
            raise NodeMismatch("attribute", f"attribute {missing} is required") from None
        length = x.shape[-1]
        rows = x.numel // length
        code = f"""for (int32_t r = 0; r < {rows}; ++r) {{
    const int32_t base = r * {length};
    int32_t peak = -2147483647 - 1;
    uint32_t e[{length}];
    uint32_t sum = 0;
    for (int32_t j = 0; j < {length}; ++j) peak = {x.c_name}[base + j] > peak ? {x.c_name}[base + j] : peak;
    for (int32_t j = 0; j < {length}; ++j) {{
        const int32_t d = (int32_t){x.c_name}[base + j] - peak;
        int32_t z = -d / {log2};
        if (z > 31) z = 31;
        const int64_t p = (int64_t)d + (int64_t)z * {log2};
        e[j] = (uint32_t)((({a}LL * (p + {b}) * (p + {b})) + {c}LL) >> z);
        sum += e[j];
    }}
    for (int32_t j = 0; j < {length}; ++j) {y.c_name}[base + j] = ({y.dtype.c_type})((e[j] * {levels - 1}u) / sum);
}}"""
        return {"code": code, "size": x.numel * 6}


class RequantizedGemmParser(IntegerGemmParser):
    """Gemm fused with its RequantShift (inputs: A, B, [C], mul, add)."""

    inputs = (4, 5)
    requantised = True


class RequantizedMatMulParser(IntegerMatMulParser):
    """MatMul (+ bias Add) fused with its RequantShift (inputs: A, B, [bias], mul, add)."""

    inputs = (4, 5)
    requantised = True


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    **{op: (integer_mapper(IntegerBinaryParser(), f"{op} integer", ANY),) for op in ("Add", "Sub", "Mul")},
    "RequantShift": (integer_mapper(RequantShiftParser(), "RequantShift integer", ANY),),
    "Gemm": (integer_mapper(IntegerGemmParser(), "Gemm integer"),),
    "MatMul": (integer_mapper(IntegerMatMulParser(), "MatMul integer"),),
    "MaxPool": (integer_mapper(IntegerMaxPoolParser(), "MaxPool integer", ANY),),
    "ReduceSum": (integer_mapper(IntegerReduceParser(), "ReduceSum integer"),),
    "ReduceMean": (integer_mapper(IntegerReduceParser(), "ReduceMean integer", ANY),),
    "iSoftmax": (integer_mapper(ISoftmaxParser(), "iSoftmax integer", ANY),),
    "RequantizedGemm": (integer_mapper(RequantizedGemmParser(), "Gemm + RequantShift integer", ANY),),
    "RequantizedMatMul": (integer_mapper(RequantizedMatMulParser(), "MatMul + RequantShift integer", ANY),),
}
