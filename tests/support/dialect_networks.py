"""Whole integer-transformer networks in Deeploy's dialect, each composed with its numpy reference.

Three networks chain the dialect ops the way integer transformers do: an embedding-free ViT/CCT block (in an
ITAMax and an ITAPartialMax variant), an RMSNorm decoder block and an iHardswish CNN.  Each is written with
``tests.dialect_reference.networks.Composer``, which builds the ONNX graph (QuantLib style: default domain,
float-declared integer tensors) and evaluates each node's reference as it adds it.  ``tests/test_dialect_networks.py``
runs all of them on both platforms; ``tests/build_matrix_cases.py`` builds the ViT block at CCT's full size.  They
live here so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tests.dialect_reference.basic import conv2d, integer_mean, matmul, reduce_sum
from tests.dialect_reference.networks import (
    Composer,
    add_requant,
    gemm_requant,
    i_gelu,
    i_hardswish,
    i_layer_norm,
    i_no_norm,
    i_rms_norm,
    ita_max,
    ita_partial_max,
    matmul_requant,
    projection,
    requantized_add,
    requantized_i_gelu,
    requantized_i_hardswish,
    rq_gemm,
    rq_integer_div,
    rq_matmul,
    rq_projection,
    weights,
)

TOKENS, DIMS, HIDDEN = 16, 32, 64
"""The networks' default sizes: 16 tokens of 32 dims, an MLP 64 wide."""


@dataclass(frozen=True)
class Network:
    """A composed network, its graph outputs, and the layers (ONNX node names) that must be cut into tiles."""

    composer: Composer
    outputs: list[str]
    """The final result first, then intermediate tensors (softmax, activation, norm outputs) compared too, so an
    error cannot hide behind a pooling or a later saturation."""
    big_layers: tuple[str, ...]


def tokens_matrix(rng: np.random.Generator, tokens: int = TOKENS, dims: int = DIMS) -> np.ndarray:
    """A [tokens, dims] int8 input with values in [-100, 100]."""
    return rng.integers(-100, 101, (tokens, dims)).astype(np.int8)


# -- 1. an embedding-free ViT/CCT block ----------------------------------------------------------------------------

def vit_block(softmax: str, tokens: int = TOKENS, dims: int = DIMS, hidden_width: int = HIDDEN) -> Network:
    """iLayerNorm → Q, K, V → Q·Kᵀ → ITAMax or ITAPartialMax → ·V → residual → iLayerNorm → iGELU MLP → residual → mean.

    One head of 16 tokens × 32 dims here; the MLP widens to 64 (the sizes are arguments so that
    ``tests/test_build_matrix.py`` builds the same block at CCT's full size: 64 tokens × 128 dims, MLP 512).  The
    ITAMax variant writes every requantised linear layer as MatMul/Gemm + RequantShift and the activation as iGELU +
    RequantShift (which the platform fuses), the ITAPartialMax variant as Deeploy's fused RQMatMul/RQGemm and
    RequantizediGELU nodes.  The block ends as CCT's sequence pooling does, with an IntegerMean over the tokens.
    """
    rng = np.random.default_rng(19)
    fused = softmax == "ITAPartialMax"
    c = Composer(f"vit_block_{softmax}")
    x = c.input("x", tokens_matrix(rng, tokens, dims))
    normed = i_layer_norm(c, x, "ln1", rng)
    q, k, v = ((rq_projection if fused else projection)(c, normed, dims, name, rng) for name in ("q", "k", "v"))
    kt = c.apply("Transpose", [k], "kt", lambda a: a.T, perm=[1, 0])
    scores = (rq_matmul if fused else matmul_requant)(c, q, kt, "scores")
    probabilities = ita_partial_max(c, scores, "attention", group_width=4) if fused else ita_max(c, scores, "attention")
    context = (rq_matmul if fused else matmul_requant)(c, probabilities, v, "context")
    residual = add_requant(c, x, context, "residual1")
    normed2 = i_layer_norm(c, residual, "ln2", rng)
    hidden = (rq_gemm if fused else gemm_requant)(c, normed2, hidden_width, "fc1", rng)
    activated = requantized_i_gelu(c, hidden, "gelu_rq") if fused else \
        c.requant_shift(i_gelu(c, hidden, "gelu"), "gelu_rq")
    down = (rq_gemm if fused else gemm_requant)(c, activated, dims, "fc2", rng)
    out = add_requant(c, residual, down, "residual2")
    sequence = c.apply("Reshape", [out, c.shape("sequence_shape", [1, tokens, dims])], "sequence",
                       lambda a, _: a.reshape(1, tokens, dims))
    c.apply("IntegerMean", [sequence], "pooled", lambda a: integer_mean(a, (1,), False), axes=[1], keepdims=0)
    big = ("q", "fc1", "fc2") if fused else ("q_acc", "fc1_acc", "fc2_acc")
    return Network(c, ["pooled", "attention", "gelu_rq"], big)


# -- 2. an RMSNorm decoder block -----------------------------------------------------------------------------------

HEADS = 2
HEAD_DIMS = DIMS // HEADS


def split_heads(c: Composer, x: str, name: str, perm: list[int]) -> str:
    """[tokens, dims] → [tokens, heads, head dims] → transposed by ``perm`` ([1, 0, 2]: per head; [1, 2, 0]: keys)."""
    split = c.apply("Reshape", [x, c.shape(f"{name}_split_shape", [TOKENS, HEADS, HEAD_DIMS])], f"{name}_split",
                    lambda a, _: a.reshape(TOKENS, HEADS, HEAD_DIMS))
    return c.apply("Transpose", [split], f"{name}_heads", lambda a: a.transpose(perm), perm=perm)


def decoder_block() -> Network:
    """iRMSNorm → Q, K, V → 2 heads of Q·Kᵀ → ITAMax → ·V ÷ attention mass → add → iRMSNorm → iHardswish MLP → add.

    Two heads of 16 dims without a causal mask, split and merged with Reshape/Transpose; both residuals are
    RequantizedAdds.  Each head's context is normalised the way an integer decoder divides by the softmax's row
    sum: RQIntegerDiv(attention·V, ReduceSum(attention)) both divides and requantises.
    """
    rng = np.random.default_rng(23)
    c = Composer("decoder_block")
    x = c.input("x", tokens_matrix(rng))
    normed = i_rms_norm(c, x, "norm1", rng)
    q, k, v = (projection(c, normed, DIMS, name, rng) for name in ("q", "k", "v"))
    queries, keys, values = (split_heads(c, q, "q", [1, 0, 2]), split_heads(c, k, "k", [1, 2, 0]),
                             split_heads(c, v, "v", [1, 0, 2]))
    scores = matmul_requant(c, queries, keys, "scores")
    probabilities = ita_max(c, scores, "attention")
    weighted = c.apply("MatMul", [probabilities, values], "weighted", matmul)
    mass = c.apply("ReduceSum", [probabilities, c.shape("mass_axes", [2])], "mass",
                   lambda a, _: reduce_sum(a, (2,), keepdims=True), keepdims=1)
    heads = rq_integer_div(c, weighted, mass, "head_context")
    merged = c.apply("Transpose", [heads], "merged", lambda a: a.transpose(1, 0, 2), perm=[1, 0, 2])
    context = c.apply("Reshape", [merged, c.shape("context_shape", [TOKENS, DIMS])], "context",
                      lambda a, _: a.reshape(TOKENS, DIMS))
    residual = requantized_add(c, x, context, "residual1")
    normed2 = i_rms_norm(c, residual, "norm2", rng)
    hidden = gemm_requant(c, normed2, HIDDEN, "fc1", rng)
    activated = c.requant_shift(i_hardswish(c, hidden, "hardswish"), "hardswish_rq")
    down = gemm_requant(c, activated, DIMS, "fc2", rng)
    requantized_add(c, residual, down, "residual2")
    return Network(c, ["residual2", "attention", "head_context"], ("q_acc", "fc1_acc", "fc2_acc"))


# -- 3. an iHardswish CNN ------------------------------------------------------------------------------------------

def hardswish_cnn() -> Network:
    """Conv 3×3 + RequantShift → RequantizediHardswish → depthwise Conv 3×3/2 + RequantShift → iNoNorm → mean → Gemm.

    MobileNetV3's stem in Deeploy's dialect: 8 → 16 channels on 16×16, a strided depthwise layer down to 8×8,
    iNoNorm in place of a batch norm, global average pooling written as IntegerMean over H and W, a classifier.
    """
    rng = np.random.default_rng(29)
    c = Composer("hardswish_cnn")
    image = c.input("image", rng.integers(-100, 101, (1, 8, 16, 16)).astype(np.int8))
    w1 = c.constant("conv1_w", weights(rng, (16, 8, 3, 3)))
    c.apply("Conv", [image, w1], "conv1_acc", lambda a, w: conv2d(a, w, pads=(1, 1, 1, 1)), kernel_shape=[3, 3],
            pads=[1, 1, 1, 1])
    features = c.requant_shift("conv1_acc", "conv1")
    activated = requantized_i_hardswish(c, features, "hardswish")
    w2 = c.constant("depthwise_w", weights(rng, (16, 1, 3, 3)))
    c.apply("Conv", [activated, w2], "depthwise_acc",
            lambda a, w: conv2d(a, w, pads=(1, 1, 1, 1), strides=(2, 2), group=16), kernel_shape=[3, 3],
            pads=[1, 1, 1, 1], strides=[2, 2], group=16)
    depthwise = c.requant_shift("depthwise_acc", "depthwise")
    normed = i_no_norm(c, depthwise, "nonorm", rng)
    pooled = c.apply("IntegerMean", [normed], "pooled", lambda a: integer_mean(a, (2, 3), False), axes=[2, 3],
                     keepdims=0)
    gemm_requant(c, pooled, 10, "classifier", rng)
    return Network(c, ["classifier", "hardswish", "nonorm"], ("conv1_acc", "depthwise_acc", "nonorm"))


NETWORKS: dict[str, Callable[[], Network]] = {
    "ViT block, ITAMax": lambda: vit_block("ITAMax"),
    "ViT block, ITAPartialMax": lambda: vit_block("ITAPartialMax"),
    "RMSNorm decoder block": decoder_block,
    "iHardswish CNN": hardswish_cnn,
}
