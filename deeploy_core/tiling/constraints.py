"""Which tile constraint each operator uses (ONNX geometry, the same on every platform).

Ops not listed run untiled: their whole tensors must fit in the compute level.
Split has no entry on purpose: the tiler runs every layer with several outputs
as one tile, so a copying Split needs its input and outputs in the compute
level at once.
Platforms may override entries (policy: a kernel that needs whole channels)
through ``Platform.tile_constraints``, and a kernel may bring its own
(``NodeMapper.tile_constraint``, set from an operator plugin's
``OperatorExtension.tile_constraint``): :func:`tile_constraint_of` applies
that order.
"""

from __future__ import annotations

from collections.abc import Mapping

from deeploy_core.mapping import Layer, NodeMapper
from deeploy_core.midend.parse import qualified_op
from deeploy_core.tiling.geometry import (
    AlongAxes,
    ChannelParameters,
    Concatenation,
    Elementwise,
    GlobalPool,
    LastAxisRows,
    MatrixProduct,
    Permutation,
    SlidingWindow,
    TileConstraint,
)
from deeploy_core.tiling.qlinear_exact import LayerGeometryPool, QLinearSoftmaxRows
from deeploy_core.tiling.recurrence import Recurrence
from deeploy_core.tiling.global_pool_layout import LayoutGlobalPool
from deeploy_core.tiling.requantised_gemm import RequantisedGemmProduct
from deeploy_core.tiling.zero_points import ZeroPointMatrixProduct

ELEMENTWISE_OPS = (
    "Abs Acos Acosh Add And Asin Asinh Atan Atanh BitShift Cast Ceil Celu Clip Cos Cosh Div Elu Equal Erf Exp Floor "
    "Gelu Greater GreaterOrEqual HardSigmoid HardSwish Identity IsInf IsNaN LeakyRelu Less LessOrEqual Log Max Mean Min "
    "Mish Mod Mul Neg Not Or Pow PRelu Reciprocal Relu Round Selu Shrink Sigmoid Sign Sin Sinh Softplus Softsign Sqrt "
    "Sub Sum Swish Tan Tanh ThresholdedRelu Where Xor"
).split()

DEFAULT_TILE_CONSTRAINTS: dict[str, TileConstraint] = {
    **{op: Elementwise() for op in ELEMENTWISE_OPS},
    "DebugPrint": Elementwise(),  # Deeploy dialect: a copy (documented no-op)
    "Quant": Elementwise(),  # Deeploy dialect: scalar scale and zero point as attributes
    "Dequant": Elementwise(),  # Deeploy dialect: scalar scale and zero point as attributes
    "IntegerDiv": Elementwise(),  # Deeploy dialect: B broadcasts to A like an Add operand
    # Deeploy dialect, element-wise: requantisation parameters are scalars (only their first element is used),
    # iNoNorm's weights and bias have x's shape.
    **{op: Elementwise() for op in ("RQIntegerDiv", "iGELU", "RequantizediGELU", "iHardswish", "RequantizediHardswish",
                                    "iNoNorm", "RequantizedAdd")},
    "RequantShift": ChannelParameters(),
    "BatchNormalization": ChannelParameters(),
    "QuantizeLinear": ChannelParameters(axis_attribute="axis"),
    "DequantizeLinear": ChannelParameters(axis_attribute="axis"),
    "Conv": SlidingWindow(weights=True, channel_parameters=(2,)),
    "RequantizedConv": SlidingWindow(weights=True, channel_parameters=(2, 3, 4)),
    "QLinearConv": SlidingWindow(weights=True, channel_parameters=(4, 5, 8), weight_index=3),
    "MaxPool": SlidingWindow(weights=False),
    "AveragePool": SlidingWindow(weights=False),
    "com.microsoft.QLinearAveragePool": LayerGeometryPool(),  # tiles name the layer geometry (exact mode)
    # scale and zero-point inputs are scalars, which broadcast to every tile
    **{f"com.microsoft.{op}": Elementwise() for op in ("QLinearAdd", "QLinearMul")},
    "GlobalAveragePool": GlobalPool(),
    "GlobalMaxPool": GlobalPool(),
    "com.microsoft.QLinearGlobalAveragePool": LayoutGlobalPool(),  # NCHW or channels_last
    "Gemm": MatrixProduct(bias=2, gemm=True),
    "RequantizedGemm": RequantisedGemmProduct(),  # C (if present) broadcast like a bias, mul/add per column
    "com.microsoft.QGemm": MatrixProduct(a=0, b=3, bias=6, channel_parameters=(4, 5), gemm=True),
    "MatMul": MatrixProduct(),
    "RequantizedMatMul": RequantisedGemmProduct(gemm=False),  # [bias per column], mul/add along output axis 1
    # Deeploy's fused forms: RQGemm(A, B, [C], add, mul), RQMatMul(A, B, add, mul), parameters along output axis 1.
    "RQGemm": RequantisedGemmProduct(),
    "RQMatMul": MatrixProduct(channel_parameters=(2, 3), axis_one_channels=True),
    "MatMulInteger": ZeroPointMatrixProduct(),  # zero points per tensor, per row of A, per column of B
    "QLinearMatMul": MatrixProduct(a=0, b=3, channel_parameters=(4, 5)),
    "Softmax": AlongAxes("softmax"),
    "com.microsoft.QLinearSoftmax": QLinearSoftmaxRows(),  # whole rows along axis (opset >= 13) or axis… (older)
    # Deeploy dialect: whole last-axis rows per tile (the kernels ignore a copied Softmax ``axis``).
    **{op: LastAxisRows() for op in ("iSoftmax", "ITAMax", "ITAPartialMax", "iLayerNorm", "iRMSNorm")},
    "LayerNormalization": AlongAxes("layernorm"),
    "ReduceMean": AlongAxes("reduce"),
    "ReduceSum": AlongAxes("reduce"),
    "IntegerMean": AlongAxes("reduce"),  # Deeploy dialect: ReduceMean with its axes/keepdims attributes
    "ReduceMax": AlongAxes("reduce"),
    "ReduceMin": AlongAxes("reduce"),
    "Transpose": Permutation(),
    "Concat": Concatenation(),
    **{op: Recurrence() for op in ("LSTM", "GRU", "RNN")},
}

UNTILED = TileConstraint()


def tile_constraint_of(layer: Layer,
                       platform_constraints: Mapping[str, TileConstraint] | None = None) -> TileConstraint:
    """The constraint the tiler uses for ``layer``.

    The kernel's own constraint comes first (only its author knows which
    tiles an operator plugin's kernel accepts), then the platform's policy for
    the op, then the core's ONNX geometry, and :data:`UNTILED` (one tile
    holding whole tensors) for an op nobody describes.
    """
    return constraint_for(qualified_op(layer.node), layer.mapper, platform_constraints)


def constraint_for(op_key: str, mapper: NodeMapper,
                   platform_constraints: Mapping[str, TileConstraint] | None = None) -> TileConstraint:
    """The lookup order of :func:`tile_constraint_of` keyed by op (``supported-ops`` has no layer at hand)."""
    own = mapper.tile_constraint
    if own is not None:
        return own
    return (platform_constraints or {}).get(op_key) or DEFAULT_TILE_CONSTRAINTS.get(op_key, UNTILED)
