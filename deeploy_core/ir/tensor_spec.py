"""The name, type and shape of a network input or output, as the generated code exposes it.

In the IR's layer because both ends use it: the code generator writes the
self-test's data from it and the compiled network hands it to validation.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TensorSpec:
    """Name, numpy dtype name and shape of a network input or output.

    ``step`` is the value of one quantisation step (LSB) of an output: the
    scale of the DequantizeLinear producing it, 1 for integer outputs, None for
    plain float outputs.  Validation reports errors in LSB with it.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    step: float | None = None
