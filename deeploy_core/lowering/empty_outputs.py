"""Empty graph outputs become empty constants (the front end admits them only as described in
:mod:`deeploy_core.ir.empty_outputs`): nothing is computed for them, and the producing node, now
without outputs, is removed by the clean-up.  :func:`.fold_constants.materialise_constant_outputs`
then writes the (empty) constant out.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.ir.empty_outputs import EMPTY_RESULT_OPS


def empty_outputs_to_constants(graph: gs.Graph) -> int:
    """Turn every empty graph output of an :data:`EMPTY_RESULT_OPS` node into a constant; returns how many."""
    replaced = 0
    for output in graph.outputs:
        if not isinstance(output, gs.Variable) or output.shape is None or output.dtype is None or output.outputs:
            continue
        if not all(isinstance(dim, (int, np.integer)) for dim in output.shape) or math.prod(output.shape) != 0:
            continue
        producer = output.inputs[0] if len(output.inputs) == 1 else None
        if producer is None or producer.op not in EMPTY_RESULT_OPS or len(producer.outputs) != 1:
            continue
        producer.outputs.clear()
        output.to_constant(np.zeros([int(dim) for dim in output.shape], dtype=np.dtype(output.dtype)))
        replaced += 1
    return replaced
