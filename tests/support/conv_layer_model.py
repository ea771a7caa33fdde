"""One convolution layer as the tiler's CP model sees it (a :class:`LayerModel`), with the memory budget a test sets.

The tiling model's own tests (``tests/tiling/test_cp_model.py``), the allocator extension point's
(``tests/tiling/test_model_allocator.py``) and the interrupt tests (``tests/test_interrupts.py``) solve the same
layer at different budgets; it lives here so that none of them imports another.
"""

from __future__ import annotations

from deeploy_core.tiling.cp_model import LayerModel, TensorTerm
from deeploy_core.tiling.geometry import Extent


def conv_like(budget: int) -> LayerModel:
    """Output [1, 16, 32, 32] from input [1, 8, 34, 34] (3x3 window), weights [16, 8, 3, 3]."""
    return LayerModel(
        "conv", (1, 16, 32, 32), (1, 2, 3),
        [TensorTerm("x", (Extent(1), Extent(8), Extent(34, 2, 1, 2), Extent(34, 3, 1, 2)), 4, 2),
         TensorTerm("w", (Extent(16, 1), Extent(8), Extent(3), Extent(3)), 4, 2),
         TensorTerm("y", (Extent(1), Extent(16, 1), Extent(32, 2), Extent(32, 3)), 4, 2)],
        table_columns=4, alignment=16, budget=budget)
