"""The L1 sizes (bytes) at which Deeploy's tiled tests for its Siracusa cluster run each of its test networks.

Issue 32 asks every peer network to validate on pulp-cluster at each of these
sizes or smaller.  The figures are those of Deeploy's Siracusa tiled test
configuration (L2 as the outer level, 8 cores), per buffering; only networks
that are among the peer tests in ``../shared`` are listed.  The MLPerf
networks and the FP32 CCT run at the default 64 000 (single) and 128 000
(double) there; both are above our default L1, so they are listed at 64 000.
"""

from __future__ import annotations

SINGLE_BUFFERED: dict[str, tuple[int, ...]] = {
    "Kernels/FP32/ReLU": (2000,),
    "Kernels/FP32/Softmax/Regular": (4000,),
    "Kernels/FP32/Conv/DW_2D_Bias": (7200,),
    "Kernels/FP32/Conv/DW_2D_NoBias": (7200,),
    "Kernels/FP32/Conv/DW_2D_ZeroValuedBias": (7200,),
    "Kernels/FP32/Conv/Regular_2D_Bias": (6600,),
    "Kernels/FP32/Conv/Regular_2D_NoBias": (1600,),
    "Kernels/FP32/Conv/Regular_2D_ZeroValuedBias": (6600,),
    "Kernels/FP32/GEMM/Regular": (8000,),
    "Kernels/FP32/MatMul": (2000,),
    "Kernels/FP32/MaxPool/Regular_2D": (2000,),
    "Kernels/FP32/Mul/Regular": (2000,),
    "Kernels/FP32/LayerNorm": (2000,),
    "Kernels/FP32/ReduceMean/KeepDims/Add_ReduceMean": (8000,),
    "Kernels/FP32/ReduceMean/KeepDims/Add_ReduceMean_Add": (8000,),
    "Kernels/FP32/ReduceMean/KeepDims/AllAxes": (50000,),
    "Kernels/FP32/ReduceMean/KeepDims/Axes1_2_3": (50000,),
    "Kernels/FP32/ReduceMean/KeepDims/Axes1_3": (5000, 50000),
    "Kernels/FP32/ReduceMean/KeepDims/Axes2_1": (6200, 50000),
    "Kernels/FP32/ReduceMean/KeepDims/Axis0": (8400, 50000),
    "Kernels/FP32/ReduceMean/KeepDims/Axis2": (8400, 50000),
    "Kernels/FP32/ReduceMean/KeepDims/ReduceMean_Add": (8000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/Add_ReduceMean": (8000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/Add_ReduceMean_Add": (8000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/AllAxes": (50000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axes1_2_3": (50000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axes1_3": (5000, 50000),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axes2_1": (6200, 50000),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axis0": (8400, 50000),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axis2": (8400, 50000),
    "Kernels/FP32/ReduceMean/NoKeepDims/ReduceMean_Add": (8000,),
    "Kernels/FP32/Reshape/SkipConnection": (1400,),
    "Kernels/FP32/Transpose": (2000,),
    "Kernels/Integer/Softmax/Regular": (800, 500, 300),
    "Kernels/Integer/MatMul/Regular": (64000, 32000, 16000),
    "Kernels/Integer/Conv/Regular_2D_RQ": (8000, 6000, 4000),
    "Kernels/Integer/Conv/DW_2D_RQ": (2561,),
    "Models/miniMobileNet": (60000, 12000, 6000, 3000),
    "Models/MLPerf/KeywordSpotting": (64000,),
    "Models/CCT/FP32/CCT_1_16_16_8": (64000,),
}

DOUBLE_BUFFERED: dict[str, tuple[int, ...]] = {
    "Kernels/FP32/ReLU": (20,),
    "Kernels/FP32/Softmax/Regular": (8000,),
    "Kernels/FP32/Conv/DW_2D_Bias": (10000,),
    "Kernels/FP32/Conv/DW_2D_NoBias": (9800,),
    "Kernels/FP32/Conv/DW_2D_ZeroValuedBias": (9800,),
    "Kernels/FP32/Conv/Regular_2D_Bias": (8800,),
    "Kernels/FP32/Conv/Regular_2D_NoBias": (2000,),
    "Kernels/FP32/Conv/Regular_2D_ZeroValuedBias": (8800,),
    "Kernels/FP32/GEMM/Regular": (8000,),
    "Kernels/FP32/MatMul": (5000,),
    "Kernels/FP32/MaxPool/Regular_2D": (5000,),
    "Kernels/FP32/Mul/Regular": (2000,),
    "Kernels/FP32/LayerNorm": (2000,),
    "Kernels/FP32/ReduceMean/KeepDims/Add_ReduceMean": (8000,),
    "Kernels/FP32/ReduceMean/KeepDims/Add_ReduceMean_Add": (8000,),
    "Kernels/FP32/ReduceMean/KeepDims/AllAxes": (100000,),
    "Kernels/FP32/ReduceMean/KeepDims/Axes1_2_3": (100000,),
    "Kernels/FP32/ReduceMean/KeepDims/Axes1_3": (10000, 50000),
    "Kernels/FP32/ReduceMean/KeepDims/Axes2_1": (13000, 50000),
    "Kernels/FP32/ReduceMean/KeepDims/Axis0": (17000, 50000),
    "Kernels/FP32/ReduceMean/KeepDims/Axis2": (17000, 50000),
    "Kernels/FP32/ReduceMean/KeepDims/ReduceMean_Add": (8000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/Add_ReduceMean": (8000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/Add_ReduceMean_Add": (8000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/AllAxes": (100000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axes1_2_3": (100000,),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axes1_3": (10000, 50000),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axes2_1": (13000, 50000),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axis0": (17000, 50000),
    "Kernels/FP32/ReduceMean/NoKeepDims/Axis2": (17000, 50000),
    "Kernels/FP32/ReduceMean/NoKeepDims/ReduceMean_Add": (8000,),
    "Kernels/FP32/Reshape/SkipConnection": (2600,),
    "Kernels/FP32/Transpose": (2000,),
    "Kernels/Integer/Softmax/Regular": (1600, 1000, 600),
    "Kernels/Integer/MatMul/Regular": (64000, 32000, 16000),
    "Kernels/Integer/Conv/Regular_2D_RQ": (8000, 6000, 5000),
    "Kernels/Integer/Conv/DW_2D_RQ": (5121,),
    "Models/miniMobileNet": (60000, 24000, 12000, 6000),
    "Models/MLPerf/KeywordSpotting": (64000,),
    "Models/CCT/FP32/CCT_1_16_16_8": (64000,),
}


def configurations() -> list[tuple[str, int, str]]:
    """Every (peer name, L1 bytes, buffering) triple, in a stable order."""
    triples = [(name, l1, "single") for name, sizes in SINGLE_BUFFERED.items() for l1 in sizes]
    triples += [(name, l1, "double") for name, sizes in DOUBLE_BUFFERED.items() for l1 in sizes]
    return sorted(triples)
