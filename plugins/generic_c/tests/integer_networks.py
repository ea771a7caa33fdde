"""Single-node integer networks written the way QuantLib exports them, run untiled on generic-c and checked bit for bit.

The integer kernel tests (``test_integer_fast_kernels``, ``test_integer_gemm_row_dot``, ``test_integer_matmul_rows``)
each build networks of one node and judge them the same way, so the harness lives here rather than in one of them:
a :class:`Network` (model, runtime inputs, the exact expected output), constants stored as QuantLib stores them
(integers in float32 tensors), the compile options, and :func:`run_bit_exact`, which compiles, builds with
``-Wall -Wextra -Werror -pedantic``, runs and requires the output to equal the expected one exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.ir.dtypes import DataType
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain


@dataclass
class Network:
    """One single-node test network: the model, its runtime inputs, the expected output and the node's name."""

    model: onnx.ModelProto
    inputs: dict[str, np.ndarray]
    expected: np.ndarray
    node: str = "node"
    input_types: dict[str, DataType] = field(default_factory=dict)


def float_constant(name: str, values: np.ndarray) -> onnx.TensorProto:
    """An initializer the way QuantLib writes one: integers stored in a float32 tensor."""
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


def options(input_types: dict[str, DataType], l1: int | None = None) -> CompileOptions:
    """generic-c with the network's integer inputs typed; tiled into an L1 of ``l1`` bytes when given."""
    return CompileOptions(platform="generic-c", level_sizes={"L1": l1} if l1 else {}, input_types=dict(input_types))


def run_bit_exact(network: Network, host: PluginHost, tmp_path: Path) -> str:
    """Compile ``network`` untiled (saved as ``tmp_path/network.onnx``), build, run; assert bit-exactness; return the
    node's kernel."""
    path = tmp_path / "network.onnx"
    onnx.save(network.model, path)
    generated, result = validate_with_data(path, options(network.input_types), host, network.inputs,
                                           [network.expected], atol=0.0, rtol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layer = next(layer for layer in generated.report["layers"] if layer["node"] == network.node)
    assert "tiling" not in layer["code_transformations"]
    return str(layer["kernel"])
