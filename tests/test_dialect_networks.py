"""Whole integer-transformer networks of Deeploy's dialect (issue 19 item 2), bit-exact on both platforms.

The single-op tests (``test_dialect_ops``, ``test_dialect_rowwise``, ...) check each op alone; these networks chain
them the way integer transformers do, so what one op hands the next (types, unsigned softmax outputs feeding a
MatMul, int32 accumulators feeding a requantisation, tiles of one layer becoming the next layer's input) is
checked too.  Every network is built with ``tests.dialect_reference.networks.Composer``, which writes the ONNX
graph (QuantLib style: default domain, float-declared integer tensors) and evaluates the numpy reference of each
node as it adds it; the requantisations are calibrated on those reference values so the intermediate tensors use
the int8 range.  The generated C (built with -Werror) must equal the reference bit for bit untiled, tiled into a
small L1 with single and double buffering, and on the 8-core cluster, and the tiled runs must really cut the big
layers into several tiles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.ir.dtypes import INT8
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin
from tests.dialect_reference.basic import conv2d, integer_mean, matmul, reduce_sum, requant_shift
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
    saturation,
    weights,
)

TOKENS, DIMS, HIDDEN = 16, 32, 64
L1_SINGLE, L1_DOUBLE = 2048, 3072
"""Small enough that the projections and MLP layers need several tiles, large enough for a row of each operand
(double buffering holds two slots of every streamed tile, so it needs more)."""

CONFIGURATIONS: dict[str, CompileOptions] = {
    "generic-c untiled": CompileOptions(platform="generic-c"),
    "generic-c L1 single": CompileOptions(platform="generic-c", level_sizes={"L1": L1_SINGLE}, buffering="single"),
    "generic-c L1 double": CompileOptions(platform="generic-c", level_sizes={"L1": L1_DOUBLE}, buffering="double"),
    "pulp-cluster 8 cores L1 single": CompileOptions(platform="pulp-cluster", level_sizes={"L1": L1_SINGLE},
                                                     buffering="single", cores=8),
    "pulp-cluster 8 cores L1 double": CompileOptions(platform="pulp-cluster", level_sizes={"L1": L1_DOUBLE},
                                                     buffering="double", cores=8),
}
"""The configurations of ``test_dialect_ops``, with an L1 sized for whole networks instead of one op."""


@dataclass(frozen=True)
class Network:
    """A composed network, its graph outputs, and the layers (ONNX node names) that must be cut into tiles."""

    composer: Composer
    outputs: list[str]
    """The final result first, then intermediate tensors (softmax, activation, norm outputs) compared too, so an
    error cannot hide behind a pooling or a later saturation."""
    big_layers: tuple[str, ...]


def _tokens(rng: np.random.Generator, tokens: int = TOKENS, dims: int = DIMS) -> np.ndarray:
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
    x = c.input("x", _tokens(rng, tokens, dims))
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
    x = c.input("x", _tokens(rng))
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

NETWORK_OPS: dict[str, tuple[str, ...]] = {
    "ViT block, ITAMax": ("iLayerNorm", "ITAMax", "iGELU", "IntegerMean"),
    "ViT block, ITAPartialMax": ("iLayerNorm", "RQMatMul", "ITAPartialMax", "RQGemm", "RequantizediGELU",
                                 "IntegerMean"),
    "RMSNorm decoder block": ("iRMSNorm", "ITAMax", "RQIntegerDiv", "RequantizedAdd", "iHardswish"),
    "iHardswish CNN": ("RequantizediHardswish", "iNoNorm", "IntegerMean"),
}
"""The dialect ops each network must compile to (checked against the compiled layers' kernels)."""


@pytest.fixture(scope="module")
def host() -> PluginHost:
    """Both bundled platforms and nothing else that happens to be installed."""
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


@pytest.mark.parametrize("network", list(NETWORKS))
def test_the_reference_uses_the_int8_range(network: str) -> None:
    # Every 8-bit tensor (requantised, normalised, softmax output) spans at least an eighth of its range and sits on
    # its bounds for at most 5% of its elements: the calibration neither crushes values to a few levels nor clips
    # them wholesale, so the bit-exact comparison means something.
    composed = NETWORKS[network]().composer
    assert composed.ranges
    for name, (low, high) in composed.ranges.items():
        values = np.asarray(composed.values[name], np.int64)
        assert low <= values.min() and values.max() <= high, (name, values.min(), values.max())
        assert values.max() - values.min() >= (high - low) / 8, (name, np.histogram(values, bins=8))
        assert saturation(values, low, high) <= 0.05, (name, np.histogram(values, bins=8))


def test_the_glue_references_agree_with_the_op_tests() -> None:
    # The networks' IntegerMean (basic.py) was written separately from the op test's reference;
    # on negative sums and exact halves both must agree element for element.
    from tests.test_dialect_ops import integer_mean_reference

    rng = np.random.default_rng(19)
    ties = rng.integers(-128, 128, (3, 16, 6)).astype(np.int8)
    ties[0, :, 0] = np.repeat(np.array([-1, -2], np.int8), 8)  # a sum of -24 over 16: exactly -1.5
    for axes, keepdims in (((1,), 0), ((1,), 1), ((2,), 0), ((1, 2), 0)):
        assert np.array_equal(integer_mean(ties, axes, bool(keepdims)),
                              integer_mean_reference(ties, list(axes), keepdims).astype(np.int64))


def _layer(report: dict[str, Any], node: str) -> dict[str, Any]:
    """The compiled layer that computes ONNX node ``node`` (alone, or fused with the requantisation after it)."""
    layers = report["layers"]
    assert isinstance(layers, list)
    return next(layer for layer in layers if layer["node"] in (node, f"{node}_rq"))


def _options(configuration: str, composed: Composer) -> CompileOptions:
    """A configuration with the network's integer graph inputs typed int8 (QuantLib declares them FLOAT)."""
    base = CONFIGURATIONS[configuration]
    return CompileOptions(platform=base.platform, level_sizes=dict(base.level_sizes), buffering=base.buffering,
                          cores=base.cores, input_types={name: INT8 for name in composed.input_dtypes})


@pytest.mark.parametrize("network", list(NETWORKS))
def test_network_compiles_to_identical_files(network: str, host: PluginHost, tmp_path: Path) -> None:
    # The same network saved in two different folders and compiled twice (tiled, on the cluster, double
    # buffered: the path with the most solver and scheduling decisions) gives byte-identical C and report.json.
    built = NETWORKS[network]()
    written = []
    for run in ("first", "second"):
        model = tmp_path / run / f"{built.composer.name}.onnx"
        model.parent.mkdir()
        onnx.save(built.composer.model(built.outputs), model)
        _, generated = compile_model(model, _options("pulp-cluster 8 cores L1 double", built.composer), host)
        generated.write(tmp_path / run / "out")
        written.append({path.relative_to(tmp_path / run / "out").as_posix(): path.read_bytes()
                        for path in sorted((tmp_path / run / "out").rglob("*")) if path.is_file()})
    assert "report.json" in written[0] and any(name.endswith(".c") for name in written[0])
    assert written[0] == written[1]


@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
@pytest.mark.parametrize("network", list(NETWORKS))
def test_network_is_bit_exact(network: str, configuration: str, host: PluginHost, tmp_path: Path) -> None:
    built = NETWORKS[network]()
    composed = built.composer
    model = tmp_path / f"{composed.name}.onnx"
    onnx.save(composed.model(built.outputs), model)
    base = CONFIGURATIONS[configuration]
    options = _options(configuration, composed)
    inputs = {name: composed.values[name] for name in composed.input_dtypes}
    expected = [composed.values[name] for name in built.outputs]
    generated, result = validate_with_data(model, options, host, inputs, expected, atol=0.0, rtol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    kernels = {str(layer["kernel"]).split(" ")[0] for layer in generated.report["layers"]}
    assert set(NETWORK_OPS[network]) <= kernels, sorted(kernels)
    if "L1" not in configuration:
        assert "tiling" not in generated.report
        return
    tiled = {layer["layer"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    for node in built.big_layers:
        layer = _layer(generated.report, node)
        assert "tiling" in layer["code_transformations"], node
        assert tiled[layer["node"]] >= 2, (node, tiled)
        if base.platform == "pulp-cluster":
            # On the cluster the big layers' work is shared among the cores, not left to one of them.
            shares = next(entry for entry in generated.report["tiling"]["layers"] if entry["layer"] == layer["node"])
            assert sum(1 for work in shares["cluster"]["work"] if work) >= 2, (node, shares["cluster"])
