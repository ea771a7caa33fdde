"""Loading external tensor data without letting a model read files outside its folder."""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import external_data_helper

from deeploy_core.frontend.errors import ModelImportError


def load_external_data_safely(model: onnx.ModelProto, model_path: Path) -> None:
    """Resolve every external-data reference inside the model's folder, then load it."""
    base = model_path.resolve().parent
    for tensor in external_data_helper._get_all_tensors(model):  # noqa: SLF001 - onnx's own walker
        if not external_data_helper.uses_external_data(tensor):
            continue
        info = external_data_helper.ExternalDataInfo(tensor)
        location = Path(info.location)
        target = (base / location).resolve()
        if location.is_absolute() or base not in target.parents:
            raise ModelImportError(
                f"tensor {tensor.name!r}: external data {info.location!r} lies outside the model's folder"
            )
        if not target.is_file():
            raise ModelImportError(f"tensor {tensor.name!r}: external data file {info.location!r} is missing")
    try:
        external_data_helper.load_external_data_for_model(model, str(base))
    except (OSError, ValueError) as error:
        raise ModelImportError(f"cannot load external data: {error}") from error
