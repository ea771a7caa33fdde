"""Deeploy's RequantShift epilogue in C: ``clamp((acc*mul + add + 2^(s-1)) >> s)``, mul/add per channel or scalar.

The integer Conv, Gemm and MatMul kernels, the standalone RequantShift and the requantised activations and
divisions of Deeploy's dialect all end in it, so it lives here rather than in one operator family.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NetworkContext, NodeMismatch


def scalar_value(value: object) -> float:
    """The first element of an attribute or constant, as a float (Deeploy writes scalars as 1-element arrays)."""
    if isinstance(value, gs.Constant):
        value = value.values
    return float(np.asarray(value).reshape(-1)[0])


class Requantisation:
    """The RequantShift epilogue: ``clamp((acc*mul + add + 2^(s-1)) >> s)``, mul/add per channel or scalar."""

    def __init__(self, node: gs.Node, ctxt: NetworkContext, mul_name: str, add_name: str, channels: int) -> None:
        for name in ("div", "signed"):
            if name not in node.attrs:
                raise NodeMismatch("attribute", f"attribute {name!r} is required")
        levels = scalar_value(node.attrs.get("n_levels_out", node.attrs.get("n_levels", 0)))
        if levels <= 0:
            raise NodeMismatch("attribute", "attribute n_levels (or n_levels_out) is required")
        self.shift = int(math.log2(scalar_value(node.attrs["div"])))
        signed = bool(scalar_value(node.attrs["signed"]))
        self.low, self.high = (-int(levels) // 2, int(levels) // 2 - 1) if signed else (0, int(levels) - 1)
        self.mul, self.add = ctxt[mul_name], ctxt[add_name]
        for param, name in ((self.mul, "mul"), (self.add, "add")):
            if param.numel not in (1, channels):
                raise NodeMismatch("shape", f"{name} has {param.numel} values; expected 1 or {channels} (axis 1)")

    def describe(self) -> dict[str, object]:
        """The parameters for reports: shift, output range, scalar or per-channel multipliers."""
        def values(buffer: Buffer) -> object:
            data = np.asarray(buffer.values).reshape(-1).tolist() if buffer.values is not None else None
            return data[0] if data is not None and len(data) == 1 else data

        return {"shift": self.shift, "range": [self.low, self.high], "mul": values(self.mul), "add": values(self.add)}

    def fits_int32(self, acc_bound: int | None) -> bool:
        """Whether ``acc*mul + add + rounding`` stays in int32 for every ``|acc| <= acc_bound``.

        Then the epilogue runs in int32, which compilers vectorise; int64
        products are scalar on most targets.  Only constant mul/add are known.
        """
        if acc_bound is None or self.mul.values is None or self.add.values is None:
            return False
        mul = int(np.max(np.abs(np.asarray(self.mul.values, dtype=np.int64))))
        add = int(np.max(np.abs(np.asarray(self.add.values, dtype=np.int64))))
        rounding = 1 << (self.shift - 1) if self.shift > 0 else 0
        return acc_bound * mul + add + rounding <= 2**31 - 1

    def store(self, target: str, c_type: str, acc: str, channel: str, acc_bound: int | None = None,
              names: tuple[str, str] | None = None) -> str:
        """C statements that requantise ``acc`` (channel index ``channel``) into ``target``.

        With ``acc_bound`` (a bound on ``|acc|``) the arithmetic is int32 when
        :meth:`fits_int32` proves it exact, else int64.  ``names`` replaces the
        mul/add arrays' C names, e.g. by the ``restrict`` pointers of
        :meth:`restrict_pointers` (gcc does not vectorise a loop whose stores
        might alias the global parameter arrays it reads).
        """
        mul_name, add_name = names or (self.mul.c_name, self.add.c_name)
        rounding = f" + {1 << (self.shift - 1)}" if self.shift > 0 else ""
        wide = "int32_t" if self.fits_int32(acc_bound) else "int64_t"
        mul = self._operand(self.mul, mul_name, channel, wide, names is not None)
        add = self._operand(self.add, add_name, channel, wide, names is not None)
        return (
            f"{{ {wide} t = (({wide})({acc}) * {mul} + "
            f"{add}{rounding}) >> {self.shift}; "
            f"t = t < {self.low} ? {self.low} : (t > {self.high} ? {self.high} : t); {target} = ({c_type})t; }}"
        )


    @staticmethod
    def _operand(param: Buffer, name: str, channel: str, wide: str, literal: bool) -> str:
        """``param[channel]`` as ``wide``; with ``literal``, a constant that is the same for every channel is
        written as a number (SSE2 has no 32-bit vector multiply: gcc then multiplies by shifts and adds)."""
        value = Requantisation._uniform(param) if literal else None
        if value is not None:
            return f"({wide}){value}"
        return f"({wide}){name}[{channel if param.numel > 1 else '0'}]"

    @staticmethod
    def _uniform(param: Buffer) -> int | None:
        """The value of a constant parameter that is the same for every channel, else None."""
        if param.values is None or not param.numel:
            return None
        values = np.unique(np.asarray(param.values, dtype=np.int64))
        return int(values[0]) if values.size == 1 else None

    RESTRICT_NAMES = ("dc_rq_mul", "dc_rq_add")
    """The C names :meth:`restrict_pointers` declares, to pass to :meth:`store` as ``names``."""

    def restrict_pointers(self) -> str:
        """Declarations of ``restrict`` pointers to mul and add (named :data:`RESTRICT_NAMES`), except those
        :meth:`store` writes as a number when given the names."""
        return "".join(f"const {param.dtype.c_type} *restrict const {name} = {param.c_name};\n"
                       for param, name in zip((self.mul, self.add), self.RESTRICT_NAMES)
                       if self._uniform(param) is None)


def restrict_parameters(requant: Requantisation | None, bias: Buffer | None) -> str:
    """``restrict`` pointers to the epilogue's arrays: ``dc_bias`` and :attr:`Requantisation.RESTRICT_NAMES`.

    Read through the global arrays, gcc cannot prove that the output stores
    leave them unchanged and keeps the loop scalar rather than check aliasing.
    """
    text = f"const {bias.dtype.c_type} *restrict const dc_bias = {bias.c_name};\n" if bias is not None else ""
    return text + (requant.restrict_pointers() if requant is not None else "")
