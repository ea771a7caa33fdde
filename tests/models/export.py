"""Exporting the zoo's networks to ONNX (both torch exporters) and quantising them with ONNX Runtime, cached.

Exporting takes seconds to a minute per network, and quantisation runs
calibration on top, so every file is kept in a cache folder outside the
repository, under a key that hashes this file, the zoo's definitions and the
versions of torch, torchvision, timm, onnx, onnxscript and ONNX Runtime: a
change to any of them re-exports, nothing else does.  The folder is
``$DEEPLOY_CORE_MODEL_CACHE`` or ``~/.cache/deeploy-core/models``.  Files
are written under a temporary name and renamed, so concurrent test workers
never read half a file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path

import numpy as np

from tests.models.zoo import ZooModel, instantiate

EXPORTERS = ("legacy", "dynamo")
OPSET = 17
SEED = 0
CALIBRATION_BATCHES = 4
_SOURCES = (Path(__file__), Path(__file__).with_name("zoo.py"), Path(__file__).with_name("torchvision_without_ops.py"),
            Path(__file__).with_name("small_networks.py"))
_LIBRARIES = ("torch", "torchvision", "timm", "onnx", "onnxscript", "onnxruntime")


def cache_folder() -> Path:
    """Where exported files live (created on first use)."""
    folder = Path(os.environ.get("DEEPLOY_CORE_MODEL_CACHE") or Path.home() / ".cache" / "deeploy-core" / "models")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def cache_key() -> str:
    """A short hash of the export code and the library versions that shape the exported graphs."""
    digest = hashlib.sha256()
    for source in _SOURCES:
        digest.update(source.read_bytes())
    for library in _LIBRARIES:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{library}={version}\n".encode())
    return digest.hexdigest()[:16]


def _cached(name: str, make: Callable[[Path], None]) -> Path:
    target = cache_folder() / cache_key() / name
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(suffix=".onnx", dir=target.parent)
    os.close(handle)
    try:
        make(Path(temporary))
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target


def example_input(model: ZooModel, seed: int = SEED) -> np.ndarray:
    """A seeded standard-normal input of the model's shape."""
    return np.random.default_rng(seed).standard_normal(model.input_shape).astype(np.float32)


def exported(model: ZooModel, exporter: str) -> Path:
    """The model exported by ``torch.onnx.export`` (``legacy``: TorchScript, ``dynamo``: torch.export), cached."""
    if exporter not in EXPORTERS:
        raise ValueError(f"unknown exporter {exporter!r}")

    def make(path: Path) -> None:
        import torch

        module = instantiate(model, SEED)
        sample = (torch.from_numpy(example_input(model)),)
        # Gradients stay on: under no_grad, nn.MultiheadAttention takes its fused fast path, which the legacy
        # exporter cannot express (aten::_native_multi_head_attention); the exported graph is the same otherwise.
        if exporter == "legacy":
            torch.onnx.export(module, sample, str(path), dynamo=False, opset_version=OPSET,
                              input_names=["input"], output_names=["output"])
        else:
            program = torch.onnx.export(module, sample, dynamo=True, opset_version=max(OPSET, 18),
                                        input_names=["input"], output_names=["output"], verbose=False)
            assert program is not None
            program.save(str(path), external_data=False)

    return _cached(f"{model.name}-{exporter}.onnx", make)


def _calibration(model: ZooModel) -> Iterator[dict[str, np.ndarray]]:
    for batch in range(CALIBRATION_BATCHES):
        yield {"input": example_input(model, seed=100 + batch)}


def quantised(model: ZooModel) -> Path:
    """The legacy export quantised by ``quantize_static``: QDQ, int8 activations and weights, per tensor."""
    source = exported(model, "legacy")

    def make(path: Path) -> None:
        from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

        class Reader(CalibrationDataReader):
            def __init__(self) -> None:
                self.batches = _calibration(model)

            def get_next(self) -> dict[str, np.ndarray] | None:
                return next(self.batches, None)

        quantize_static(str(source), str(path), Reader(), quant_format=QuantFormat.QDQ, per_channel=False,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)

    return _cached(f"{model.name}-int8-qdq.onnx", make)
