"""Which empty tensors a network may have: graph outputs nobody reads, made by ops whose empty result is legitimate.

An empty activation is refused (C has no zero-length arrays, and a kernel
larger than its input is a model bug).  But ``Shape`` with ``start >= end``,
a ``Slice`` past the end or a ``ConstantOfShape`` of a zero size are correct
models whose output simply holds nothing.  Such an output's value does not
depend on any input, so lowering replaces it by an empty constant (see
:mod:`deeploy_core.lowering.empty_outputs`): no kernel ever runs on it and
the constants file pads an empty array to one element.
"""

from __future__ import annotations

EMPTY_RESULT_OPS = frozenset({"Shape", "Slice", "ConstantOfShape", "Range", "Compress"})
"""Single-output ops whose output may legitimately be empty."""
