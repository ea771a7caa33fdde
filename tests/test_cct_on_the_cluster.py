"""Integer CCT blocks at Deeploy's size on the cluster (issue 32): 64 tokens × 128 embedding, MLP 512, multi-head.

QuantLib exports a CCT's linear layers as ``MatMul`` on ``[1, tokens, dims]``
activations followed by a ``RequantShift`` whose parameters are per channel
along axis 1 (per token, by Deeploy's rule), which the platform fuses into one
``RequantizedMatMul``.  The tiler used to keep the tokens and the columns of
such a 3-D product whole, so one 128 × 512 projection needed 107,670 bytes of
L1 at once.  Here the blocks (iLayerNorm → per-token requantised Q, K, V →
heads of 8 or of 64 dims → Q·Kᵀ → ITAMax or ITAPartialMax → ·V → residual →
iLayerNorm → per-token requantised MLP with iGELU → residual) must equal the
numpy reference bit for bit at L1 64000 and 32000, single and double
buffered, with fused tiling on and off.  The default run keeps two of the 32
configurations (one per softmax, with heads of 64); the rest run with
``-m heavy_model``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.ir.dtypes import INT8
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin
from tests.dialect_reference.basic import matmul, requant_shift
from tests.dialect_reference.networks import (
    Composer,
    add_requant,
    calibrate,
    i_gelu,
    i_layer_norm,
    ita_max,
    ita_partial_max,
    matmul_requant,
    rq_matmul,
    weights,
)

TOKENS, DIMS, HIDDEN = 64, 128, 512


def per_token_requant(c: Composer, x: str, output: str) -> str:
    """RequantShift with mul and add per token (``[1, tokens, 1]``: along axis 1), calibrated on x's values."""
    chosen = calibrate(c.values[x])
    tokens = c.values[x].shape[1]
    mul = np.array([chosen.mul - 2 + token % 5 for token in range(tokens)]).reshape(1, tokens, 1)
    add = np.array([chosen.add + token % 3 for token in range(tokens)]).reshape(1, tokens, 1)
    mul_name, add_name = c.constant(f"{output}_mul", mul), c.constant(f"{output}_add", add)
    value = requant_shift(c.values[x], mul.reshape(-1), add.reshape(-1), chosen.div)
    c.node("RequantShift", [x, mul_name, add_name], output, value, **chosen.attributes())
    c.ranges[output] = (-128, 127)
    return output


def linear(c: Composer, x: str, width: int, output: str, rng: np.random.Generator) -> str:
    """x [1, tokens, K] @ W [K, width], requantised per token: the platform's 3-D RequantizedMatMul."""
    w = c.constant(f"{output}_w", weights(rng, (c.values[x].shape[-1], width)))
    c.apply("MatMul", [x, w], f"{output}_acc", matmul)
    return per_token_requant(c, f"{output}_acc", output)


def heads(c: Composer, x: str, name: str, head_dims: int, perm: list[int]) -> str:
    """[1, tokens, dims] → [1, tokens, heads, head dims] → transposed by ``perm``."""
    count = DIMS // head_dims
    split = c.apply("Reshape", [x, c.shape(f"{name}_split_shape", [1, TOKENS, count, head_dims])], f"{name}_split",
                    lambda a, _: a.reshape(1, TOKENS, count, head_dims))
    return c.apply("Transpose", [split], f"{name}_heads", lambda a: a.transpose(perm), perm=perm)


@dataclass(frozen=True)
class Block:
    composer: Composer
    outputs: list[str]


def cct_block(softmax: str, head_dims: int) -> Block:
    rng = np.random.default_rng(32)
    c = Composer(f"cct_{softmax}_{head_dims}")
    x = c.input("x", rng.integers(-100, 101, (1, TOKENS, DIMS)).astype(np.int8))
    normed = i_layer_norm(c, x, "ln1", rng)
    q, k, v = (linear(c, normed, DIMS, name, rng) for name in ("q", "k", "v"))
    queries, keys, values = (heads(c, q, "q", head_dims, [0, 2, 1, 3]), heads(c, k, "k", head_dims, [0, 2, 3, 1]),
                             heads(c, v, "v", head_dims, [0, 2, 1, 3]))
    if softmax == "ITAPartialMax":
        scores = rq_matmul(c, queries, keys, "scores")
        probabilities = ita_partial_max(c, scores, "attention", group_width=16)
        context = rq_matmul(c, probabilities, values, "context")
    else:
        scores = matmul_requant(c, queries, keys, "scores")
        probabilities = ita_max(c, scores, "attention")
        context = matmul_requant(c, probabilities, values, "context")
    merged = c.apply("Transpose", [context], "merged", lambda a: a.transpose(0, 2, 1, 3), perm=[0, 2, 1, 3])
    joined = c.apply("Reshape", [merged, c.shape("joined_shape", [1, TOKENS, DIMS])], "joined",
                     lambda a, _: a.reshape(1, TOKENS, DIMS))
    residual = add_requant(c, x, joined, "residual1")
    normed2 = i_layer_norm(c, residual, "ln2", rng)
    hidden = linear(c, normed2, HIDDEN, "fc1", rng)
    activated = c.requant_shift(i_gelu(c, hidden, "gelu"), "gelu_rq")
    down = linear(c, activated, DIMS, "fc2", rng)
    add_requant(c, residual, down, "residual2")
    return Block(c, ["residual2", "attention"])


CONFIGURATIONS = [(l1, buffering, fusion) for l1 in (64000, 32000) for buffering in ("single", "double")
                  for fusion in ("auto", "none")]
BLOCKS = [(softmax, head_dims) for softmax in ("ITAMax", "ITAPartialMax") for head_dims in (8, 64)]


def _cases() -> list[object]:
    cases = []
    for block_index, (softmax, head_dims) in enumerate(BLOCKS):
        for index, (l1, buffering, fusion) in enumerate(CONFIGURATIONS):
            # Two blocks in the default run (one per softmax, each with its own configuration): CI's time budget.
            default = head_dims == 64 and index == (3 * block_index + 1) % len(CONFIGURATIONS)
            marks = [] if default else [pytest.mark.heavy_model(reason="the rest of the CCT matrix")]
            cases.append(pytest.param(softmax, head_dims, l1, buffering, fusion, marks=marks,
                                      id=f"{softmax}-heads{head_dims}-L1-{l1}-{buffering}-fusion-{fusion}"))
    return cases


@pytest.fixture(scope="module")
def cluster_host() -> PluginHost:
    host = PluginHost()
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return host


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "softmax" in metafunc.fixturenames:
        metafunc.parametrize(("softmax", "head_dims", "l1", "buffering", "fusion"), _cases())


def test_cct_block_is_bit_exact_on_the_cluster(softmax: str, head_dims: int, l1: int, buffering: str, fusion: str,
                                               cluster_host: PluginHost, tmp_path: Path) -> None:
    block = cct_block(softmax, head_dims)
    composed = block.composer
    model = tmp_path / f"{composed.name}.onnx"
    onnx.save(composed.model(block.outputs), model)
    options = CompileOptions(platform="pulp-cluster", level_sizes={"L1": l1}, buffering=buffering, fusion=fusion,
                             input_types={name: INT8 for name in composed.input_dtypes})
    inputs = {name: composed.values[name] for name in composed.input_dtypes}
    expected = [composed.values[name] for name in block.outputs]
    generated, result = validate_with_data(model, options, cluster_host, inputs, expected, atol=0.0, rtol=0.0,
                                           repeats=1, toolchain=Toolchain.from_environment())
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    operators = {layer["node"]: layer["op"] for layer in generated.report["layers"]}
    tiled = {layer["layer"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    for projection in ("fc1_acc_rq", "fc2_acc_rq"):  # the 128 x 512 products with per-token parameters
        assert operators[projection] == "RequantizedMatMul", operators
        assert tiled[projection] >= 2, tiled
