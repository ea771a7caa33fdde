"""What the arithmetic of each generic-C op was checked against (``Platform.verification``).

The statuses are facts about this plugin's test suite and about Deeploy's own
verification (``deeploy-op-semantics.md`` §0), written down here because the
listing must not depend on ``../shared`` being present or on which tests ran
last.  Keys are op keys as the platform maps them; an entry for an op that is
not mapped (yet) is simply not shown, and a mapped op without an entry fails
``tests/test_supported_ops_listing.py``, so whoever adds an op states
how it is checked.  pulp-cluster runs these kernels too and shares the table.
"""

from __future__ import annotations

from deeploy_core.plugin_api import OpVerification


def _peer(tests: str) -> OpVerification:
    return OpVerification("peer", f"matches Deeploy's peer outputs (integers bit-exact, float32 within 1e-4): {tests}")


def _node_tests() -> OpVerification:
    return OpVerification("onnx-node-tests", "the ONNX backend node tests of the op that the platform accepts pass "
                                             "(every element type C carries; the conformance suite of both platforms)")


def _node_tested_by_modules() -> list[str]:
    """Ops whose op module declares ``NODE_TESTED``: checked by ONNX's node tests only (new families add their ops
    there, next to their kernels, instead of to the list below)."""
    from deeploy_generic_c.ops import family_modules

    return [op for module in family_modules() for op in getattr(module, "NODE_TESTED", ())]


def _onnxruntime(how: str) -> OpVerification:
    return OpVerification("onnxruntime", f"quantised test networks from ONNX Runtime's quantize_static: {how}")


def _reference(deeploy: str) -> OpVerification:
    return OpVerification("reference", f"bit-exact with a numpy reference written from deeploy-op-semantics.md "
                                       f"only; {deeploy}")


_DEEPLOY_VERIFIED = "Deeploy verified it on held-out models, no peer data for it in ../shared"
_DEEPLOY_UNVERIFIED = "Deeploy marks the arithmetic unverified (implemented as written)"
_QDQ = "bit-exact with ONNX Runtime in --quantization exact (test_qdq.py, test_qdq_fire.py)"
_FIXED_POINT = ("QOperator files (QLinear nodes written in the model): bit-exact (Conv/MatMul/Gemm) or within 1 LSB "
                "(Add/Mul/pools) of ONNX Runtime (test_qoperator_requantisation.py, test_qdq.py)")
_FUSED_EXACT = ("QDQ islands in --quantization exact: bit-exact with ONNX Runtime's unfused float32 arithmetic "
                "(test_qlinear_float32.py, test_qdq.py, tests/quant)")


def _litert(layers: str) -> OpVerification:
    return OpVerification("litert", f"--quantization fixed-point on tf2onnx --tflite models: 0 LSB against LiteRT's "
                                    f"reference kernels on {layers} (test_tflite_litert.py, tests/quant)")


_NODE_TESTS_ONLY = (
    "Abs BatchNormalization Concat ConvTranspose Elu Erf Gather GRU Identity LeakyRelu Log LSTM Max Min Neg RNN "
    "Reciprocal ReduceMax ReduceMin Softplus Split Tanh Unsqueeze"
).split()

_PEER_AND_NODE_TESTS: dict[str, str] = {
    "Add": "Kernels/Integer/Add/*, Kernels/FP32/Add, integer models",
    "AveragePool": "Kernels/FP32/AveragePool/*",
    "Ceil": "Kernels/FP32/Ceil",
    "Clip": "Kernels/FP32/Clip, Kernels/Mixed/Quant",
    "Conv": "Kernels/Integer/Conv/*, Kernels/FP32/Conv/*, miniMobileNet",
    "Div": "Kernels/FP32/Div, Kernels/Mixed/Quant",
    "Exp": "Kernels/FP32/Exp",
    "Flatten": "miniMobileNet",
    "Floor": "Kernels/FP32/Floor",
    "Gelu": "CCT_1_16_16_8 (com.microsoft::Gelu)",
    "Gemm": "Kernels/Integer/GEMM/Regular, Kernels/FP32/GEMM/Regular",
    "GlobalAveragePool": "Kernels/FP32/GlobalAveragePool",
    "GlobalMaxPool": "Kernels/FP32/GlobalMaxPool",
    "GroupNormalization": "Kernels/FP32/GroupNorm",
    "HardSigmoid": "Kernels/FP32/HardSigmoid",
    "HardSwish": "Kernels/FP32/HardSwish",
    "InstanceNormalization": "Kernels/FP32/InstanceNorm",
    "LayerNormalization": "Kernels/FP32/LayerNorm, CCT_1_16_16_8",
    "MatMul": "Kernels/Integer/MatMul/*, Kernels/FP32/MatMul",
    "MaxPool": "Kernels/Integer/MaxPool/*, Kernels/FP32/MaxPool/*",
    "Mul": "Kernels/FP32/Mul, Kernels/Mixed/Dequant",
    "Pad": "Kernels/Integer/Pad/*",
    "Pow": "Kernels/FP32/Pow/*",
    "ReduceMean": "Kernels/Integer/ReduceMean, Kernels/FP32/ReduceMean/*",
    "ReduceSum": "Kernels/Integer/ReduceSum",
    "Relu": "Kernels/FP32/ReLU, CCT_1_16_16_8",
    "Reshape": "KeywordSpotting, EEGFormer, CCT_1_16_16_8",
    "Round": "Kernels/Mixed/Quant, Transformer_DeepQuant",
    "Sigmoid": "Kernels/FP32/Sigmoid",
    "Slice": "Kernels/Integer/Slice",
    "Softmax": "Kernels/FP32/Softmax/Regular, CCT_1_16_16_8",
    "Sqrt": "Kernels/FP32/Sqrt, Kernels/FP32/RMSNorm/separate_ops",
    "Squeeze": "CCT_1_16_16_8",
    "Sub": "Kernels/Integer/Sub, Kernels/FP32/Sub, Kernels/Mixed/Dequant",
    "Swish": "Kernels/FP32/Swish",
    "Transpose": "Kernels/FP32/Transpose, EEGFormer, Transformer_DeepQuant",
}

VERIFICATION: dict[str, tuple[OpVerification, ...]] = {
    **{op: (_node_tests(),) for op in _NODE_TESTS_ONLY},
    **{op: (_node_tests(),) for op in _node_tested_by_modules()},
    **{op: (_peer(tests), _node_tests()) for op, tests in _PEER_AND_NODE_TESTS.items()},
    # Deeploy's integer dialect with peer data in ../shared
    "RequantShift": (_peer("Kernels/Integer/Conv/*_RQ, Kernels/Integer/MatMul/Regular_RQ, miniMobileNet, "
                           "KeywordSpotting, EEGFormer"),),
    "RequantizedConv": (_peer("Conv + RequantShift of Kernels/Integer/Conv/*_RQ, miniMobileNet (fused by lowering)"),),
    "RequantizedGemm": (_peer("Gemm + RequantShift of the integer models (fused by lowering)"),),
    "RequantizedMatMul": (_peer("MatMul + RequantShift of Kernels/Integer/MatMul/Regular_RQ (fused by lowering)"),),
    "iSoftmax": (_peer("Kernels/Integer/Softmax/Regular"),),
    # Deeploy's dialect, checked here against the numpy reference only
    "Quant": (_reference("the same formula as the Div-Add-Round-Clip pattern Deeploy's Kernels/Mixed/Quant peer "
                         "test verifies (that pattern runs here as its standard ops, checked as peer)"),),
    "Dequant": (_reference("the same formula as the Sub-Mul pattern Deeploy's Kernels/Mixed/Dequant peer test "
                           "verifies (that pattern runs here as its standard ops, checked as peer)"),),
    **{op: (_reference(_DEEPLOY_VERIFIED),) for op in ("ITAMax", "ITAPartialMax", "iLayerNorm", "iGELU",
                                                        "RequantizediGELU", "iGELURequantShift", "IntegerMean")},
    **{op: (_reference(_DEEPLOY_UNVERIFIED),) for op in (
        "IntegerDiv", "RQIntegerDiv", "IntegerDivRequantShift", "iHardswish", "RequantizediHardswish",
        "iHardswishRequantShift", "iRMSNorm", "iNoNorm", "RQGemm", "RQMatMul")},
    "MatMulInteger": (OpVerification("onnxruntime", "int8/uint8 networks with per-tensor and per-column zero points "
                                                    "bit-exact with ONNX Runtime (test_dialect_linear.py)"),
                      OpVerification("onnx-node-tests", "test_matmulinteger on both platforms (an integer case, run by "
                                                        "test_dialect_linear.py)"),
                      _reference("per-row zero points of A and the float-declared, zero-point-free form Deeploy maps "
                                 "as integer MatMul (semantics §8, unverified there)")),
    "RequantizedAdd": (_reference("Deeploy marks the arithmetic unverified; its rounding is defined by this "
                                  "project (deeploy-op-semantics.md leaves it open)"),),
    # Made by the lowering (lowering_elementwise), never in a model: "peer" is for ops of the peer networks.
    "FusedElementwise": (OpVerification("onnxruntime", "fused chains with scalar, broadcast and full constants, "
                                                       "constants as left operands, untiled and tiled: bit-exact "
                                                       "with ONNX Runtime (test_fused_elementwise.py); "
                                                       "Transformer_DeepQuant's fused quantiser chains match its "
                                                       "peer outputs"),),
    "DebugPrint": (OpVerification("documented no-op", "copies its input to its output and prints nothing (tests: "
                                                      "output equals input, untiled, tiled and on the cluster)"),),
    "Cast": (_peer("Transformer_DeepQuant, whose Casts convert constants and are folded before mapping"),
             OpVerification("onnxruntime", "a Cast to its input's own type is a view (no code): "
                                           "test_cast_view.py and timm's EfficientViT exported by TorchScript "
                                           "(tests/models) match ONNX Runtime"),
             OpVerification("reference", "a type-changing Cast (ops/cast.py, every pair of carried types and "
                                         "float16): ONNX's Cast node tests, and numpy's astype on edge values, "
                                         "with NaN, out-of-range and negative floats defined as documented "
                                         "(test_cast.py)"),),
    # ONNX's quantised operators, as QDQ exact mode fuses them or as exporters write them
    "QuantizeLinear": (_onnxruntime(_QDQ),),
    "DequantizeLinear": (_onnxruntime(_QDQ), _node_tests()),
    "QLinearConv": (_onnxruntime(_QDQ), _onnxruntime(_FIXED_POINT), _litert("Conv and depthwise Conv layers")),
    "QLinearMatMul": (_onnxruntime(_QDQ), _onnxruntime(_FIXED_POINT), _litert("Dense layers without bias")),
    "com.microsoft.QGemm": (_onnxruntime(_QDQ), _onnxruntime(_FIXED_POINT), _litert("Dense layers")),
    "com.microsoft.QLinearAdd": (_onnxruntime(_FUSED_EXACT), _onnxruntime(_FIXED_POINT), _litert("Add layers")),
    "com.microsoft.QLinearMul": (_onnxruntime(_FUSED_EXACT), _onnxruntime(_FIXED_POINT), _litert("Mul layers")),
    "com.microsoft.QLinearAveragePool": (_onnxruntime(_FUSED_EXACT), _onnxruntime(_FIXED_POINT),
                                         _litert("AveragePool layers (VALID and SAME)")),
    "com.microsoft.QLinearGlobalAveragePool": (_onnxruntime(_FUSED_EXACT), _onnxruntime(_FIXED_POINT),
                                               _litert("global average pools (TFLite's MEAN)")),
    "com.microsoft.QLinearSoftmax": (_onnxruntime(_FUSED_EXACT + "; the exponential follows MLAS's AVX2/FMA3 code"),
                                     _litert("Softmax layers")),
    "IntegerLookup": (_onnxruntime("element-wise QDQ islands (Sigmoid, Tanh, HardSwish, LeakyRelu, rescales, ...) in "
                                   "--quantization exact: all 256 inputs equal ONNX Runtime (test_quantized_lookup.py)"),),
}
"""Op key -> the checks its kernels pass, strongest first."""
