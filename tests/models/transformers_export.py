"""Exporting the transformers networks to ONNX with both torch exporters, cached beside the zoo's exports.

The files live in the zoo's cache folder (``export.py``: its key covers torch,
onnx, onnxscript and ONNX Runtime), in a subfolder whose key also hashes this
file, ``transformers_models.py`` and the transformers version: a change to
any of them re-exports, nothing else does.
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

from tests.models import export
from tests.models.transformers_models import TransformersModel, example_inputs, instantiate

EXPORTERS = export.EXPORTERS
_SOURCES = (Path(__file__), Path(__file__).with_name("transformers_models.py"))


def cache_key() -> str:
    """A short hash of the builders, this exporter and the transformers version."""
    digest = hashlib.sha256()
    for source in _SOURCES:
        digest.update(source.read_bytes())
    try:
        digest.update(f"transformers={metadata.version('transformers')}\n".encode())
    except metadata.PackageNotFoundError:
        digest.update(b"transformers=absent\n")
    return digest.hexdigest()[:16]


def exported(model: TransformersModel, exporter: str) -> Path:
    """``model`` exported by ``torch.onnx.export`` (``legacy``: TorchScript, ``dynamo``: torch.export), cached."""
    if exporter not in EXPORTERS:
        raise ValueError(f"unknown exporter {exporter!r}")

    def make(path: Path) -> None:
        import torch

        module = instantiate(model, export.SEED)
        sample = tuple(torch.from_numpy(array) for array in example_inputs(model, export.SEED))
        names = [spec.name for spec in model.inputs]
        with torch.no_grad():
            if exporter == "legacy":
                torch.onnx.export(module, sample, str(path), dynamo=False, opset_version=export.OPSET,
                                  input_names=names, output_names=["output"])
            else:
                program = torch.onnx.export(module, sample, dynamo=True, opset_version=max(export.OPSET, 18),
                                            input_names=names, output_names=["output"], verbose=False)
                assert program is not None
                program.save(str(path), external_data=False)

    return export._cached(f"transformers-{cache_key()}/{model.name}-{exporter}.onnx", make)
