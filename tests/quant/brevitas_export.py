"""A tiny Brevitas CNN exported as QCDQ (TorchScript and dynamo) and QONNX, cached.

The network is what a Brevitas user deploys to a microcontroller: an 8-bit
input quantiser, two ``QuantConv2d`` + ``QuantReLU`` layers with a max pool
between them, and a ``QuantLinear`` head with an 8-bit output quantiser; every
bias is ``Int32Bias`` (the scale of input times weight, as integer kernels
need) except in the QCDQ dynamo export, which Brevitas 0.13 refuses with a
quantised bias ("does not support quantized bias"), so it keeps float biases;
weights are 8- or 4-bit per tensor, activations 8-bit.  It is seeded and
calibrated on seeded data, so every export of one version set is the same.

Exports take seconds, so each file is kept in ``$DEEPLOY_CORE_MODEL_CACHE/quant``
(default ``~/.cache/deeploy-core/quant``) under a key hashing this file and the
versions of torch, brevitas, qonnx, onnx, onnxscript and onnxoptimizer; dynamo's
external data is folded into the one file, written under a temporary name and
renamed, so concurrent workers never read half a file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

from deeploy_core.testing.tflite_export import installed_version

EXPORTS = ("qcdq_torchscript", "qcdq_dynamo", "qonnx_torchscript", "qonnx_dynamo")
"""Exporter (QCDQ: ``export_onnx_qcdq``, QONNX: ``export_qonnx``) and torch exporter (``dynamo=False/True``)."""
RESIDUAL_EXPORTS = ("qcdq_torchscript", "qonnx_torchscript", "qonnx_dynamo")
"""The residual network's exports (its biases are quantised, which Brevitas' dynamo QCDQ export refuses)."""
WEIGHT_BITS = (8, 4)
INPUT_SHAPE = (1, 1, 8, 8)
SEED = 0
_LIBRARIES = ("torch", "brevitas", "qonnx", "onnx", "onnxscript", "onnxoptimizer")


def cache_folder() -> Path:
    """Where the exports live (created on first use)."""
    base = os.environ.get("DEEPLOY_CORE_MODEL_CACHE")
    folder = (Path(base) if base else Path.home() / ".cache" / "deeploy-core") / "quant"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def cache_key() -> str:
    """A short hash of this file and the library versions that shape the exported graphs."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for library in _LIBRARIES:
        digest.update(f"{library}={installed_version(library)}\n".encode())
    return digest.hexdigest()[:16]


def _network(weight_bits: int, int_bias: bool):  # type: ignore[no-untyped-def]  # torch, brevitas optional
    """The seeded, calibrated network in eval mode (``int_bias``: ``Int32Bias``, else float biases)."""
    import brevitas.nn as qnn
    import torch
    from brevitas.quant import Int8ActPerTensorFloat, Int32Bias
    from torch import nn

    torch.manual_seed(SEED)
    bias = Int32Bias if int_bias else None

    class TinyQuantCNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inp = qnn.QuantIdentity(bit_width=8, return_quant_tensor=True)
            self.conv1 = qnn.QuantConv2d(1, 8, 3, padding=1, weight_bit_width=weight_bits, bias_quant=bias,
                                         return_quant_tensor=True)
            self.relu1 = qnn.QuantReLU(bit_width=8, return_quant_tensor=True)
            self.pool = nn.MaxPool2d(2)  # QuantTensor passes through, scale kept
            self.conv2 = qnn.QuantConv2d(8, 16, 3, padding=1, weight_bit_width=weight_bits, bias_quant=bias,
                                         return_quant_tensor=True)
            self.relu2 = qnn.QuantReLU(bit_width=8, return_quant_tensor=True)
            self.fc = qnn.QuantLinear(16 * 4 * 4, 10, bias=True, weight_bit_width=weight_bits, bias_quant=bias,
                                      output_quant=Int8ActPerTensorFloat, return_quant_tensor=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.pool(self.relu1(self.conv1(self.inp(x))))
            x = self.relu2(self.conv2(x))
            return self.fc(x.flatten(1))

    return _calibrated(TinyQuantCNN())


def _residual():  # type: ignore[no-untyped-def]  # torch and brevitas are optional
    """Brevitas' other layers: 4-bit per-channel weights, 4-bit activations, QuantEltwiseAdd, TruncAvgPool2d.

    (What QONNX writes as ``Trunc`` and 4-bit activations as a ``Clip`` between
    QuantizeLinear and DequantizeLinear.)
    """
    import brevitas.nn as qnn
    import torch
    from brevitas.quant import Int8ActPerTensorFloat, Int8WeightPerChannelFloat, Int32Bias
    from torch import nn

    torch.manual_seed(SEED)
    layer = {"weight_quant": Int8WeightPerChannelFloat, "weight_bit_width": 4, "bias_quant": Int32Bias,
             "return_quant_tensor": True}

    class TinyResidual(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inp = qnn.QuantIdentity(bit_width=8, return_quant_tensor=True)
            self.conv1 = qnn.QuantConv2d(1, 8, 3, padding=1, **layer)
            self.relu1 = qnn.QuantReLU(bit_width=4, return_quant_tensor=True)
            self.conv2 = qnn.QuantConv2d(8, 8, 3, padding=1, **layer)
            self.relu2 = qnn.QuantReLU(bit_width=4, return_quant_tensor=True)
            self.add = qnn.QuantEltwiseAdd(return_quant_tensor=True)
            self.pool = qnn.TruncAvgPool2d(kernel_size=2, stride=2, return_quant_tensor=True)
            self.fc = qnn.QuantLinear(8 * 4 * 4, 10, **{**layer, "return_quant_tensor": False},
                                      output_quant=Int8ActPerTensorFloat)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.relu1(self.conv1(self.inp(x)))
            z = self.relu2(self.conv2(y))
            return self.fc(torch.flatten(self.pool(self.add(y, z)), 1))

    return _calibrated(TinyResidual())


def _calibrated(network):  # type: ignore[no-untyped-def]
    """``network`` after activation statistics from seeded batches, in eval mode."""
    import torch

    rng = np.random.default_rng(SEED)
    calibration = torch.from_numpy(rng.uniform(-1, 1, (32, *INPUT_SHAPE[1:])).astype(np.float32))
    network.train()
    with torch.no_grad():  # activation quantisers take their ranges from the first batches' statistics
        for start in range(0, 32, 4):
            network(calibration[start:start + 4])
    network.eval()
    return network


def _export(kind: str, weight_bits: int | None, target: Path) -> None:
    import onnx
    import torch
    from brevitas.export import export_onnx_qcdq, export_qonnx

    torch.set_num_threads(1)
    network = _residual() if weight_bits is None else _network(weight_bits, int_bias=kind != "qcdq_dynamo")
    example = torch.from_numpy(example_inputs(1)[0])
    exporter = export_onnx_qcdq if kind.startswith("qcdq") else export_qonnx
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.onnx"
        exporter(network, example, export_path=str(path), dynamo=kind.endswith("dynamo"))
        model = onnx.load(str(path))  # pulls dynamo's external data in
    onnx.save(model, str(target))


def exported(kind: str, weight_bits: int | None) -> Path:
    """The CNN with ``weight_bits``-bit weights (None: the residual network) exported by ``kind``, cached."""
    if weight_bits is None and kind not in RESIDUAL_EXPORTS or weight_bits is not None and (
            kind not in EXPORTS or weight_bits not in WEIGHT_BITS):
        raise ValueError(f"unknown export {kind!r} / {weight_bits} bits")
    name = "residual_a4w4" if weight_bits is None else f"tinycnn_w{weight_bits}"
    target = cache_folder() / cache_key() / f"{name}_{kind}.onnx"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(suffix=".onnx", dir=target.parent)
    os.close(handle)
    try:
        _export(kind, weight_bits, Path(temporary))
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target


def example_inputs(count: int, seed: int = SEED + 1) -> list[np.ndarray]:
    """``count`` seeded inputs in the calibration range (a few beyond it, so the input quantiser saturates)."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.1, 1.1, INPUT_SHAPE).astype(np.float32) for _ in range(count)]
