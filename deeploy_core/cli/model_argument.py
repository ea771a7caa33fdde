"""The MODEL argument: an ``.onnx`` file, or a Deeploy-style test folder holding ``network.onnx``.

``sweep`` always took a folder with ``network.onnx`` and its ``inputs.npz`` /
``outputs.npz`` (the layout of Deeploy's test networks); ``compile``,
``validate`` and ``analyze`` refused the same folder.  Now they read the
folder's ``network.onnx``, and its data where the command has no data of its
own: ``compile``/``validate`` take the folder's inputs and expected outputs
unless ``--inputs``/``--outputs`` are given, ``analyze`` its input types.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import click

from deeploy_core.sweep.point import GOLDEN_OUTPUTS, MODEL_FILE, SAMPLE_INPUTS

FOLDER_KEY = "deeploy_core.model_folder"
"""Where the argument leaves the folder it was given (``click.Context.meta``)."""


@dataclass(frozen=True)
class ModelFolder:
    """A test folder given as MODEL: its sample inputs and expected outputs, when present."""

    folder: Path
    inputs: Path | None
    outputs: Path | None


class ModelPath(click.Path):
    """A path; a folder holding ``network.onnx`` becomes that file (the folder is kept in the context)."""

    def __init__(self) -> None:
        super().__init__(path_type=Path)

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path = Path(os.fsdecode(super().convert(value, param, ctx)))  # type: ignore[arg-type]
        if path.is_dir() and (path / MODEL_FILE).is_file():
            inputs, outputs = path / SAMPLE_INPUTS, path / GOLDEN_OUTPUTS
            if ctx is not None:
                ctx.meta[FOLDER_KEY] = ModelFolder(path, inputs if inputs.is_file() else None,
                                                   outputs if outputs.is_file() and inputs.is_file() else None)
            return path / MODEL_FILE
        return path


def folder_data(inputs: Path | None, outputs: Path | None) -> tuple[Path | None, Path | None, str | None]:
    """(inputs, outputs, notice): the command's own data, else the model folder's (and a line saying so)."""
    folder: ModelFolder | None = click.get_current_context().meta.get(FOLDER_KEY)
    if folder is None or inputs is not None or folder.inputs is None:
        return inputs, outputs, None
    used = [folder.inputs.name] + ([folder.outputs.name] if outputs is None and folder.outputs is not None else [])
    return (folder.inputs, outputs if outputs is not None else folder.outputs,
            f"using {' and '.join(used)} of {folder.folder} (give --inputs to use other data)")


def folder_inputs() -> Path | None:
    """The model folder's sample inputs, if MODEL was a folder that has them."""
    folder: ModelFolder | None = click.get_current_context().meta.get(FOLDER_KEY)
    return folder.inputs if folder is not None else None


def model_display_name(model: Path) -> str:
    """How titles name MODEL: a test folder by its own name (every one holds ``network.onnx``), a file by its."""
    folder: ModelFolder | None = click.get_current_context().meta.get(FOLDER_KEY)
    return folder.folder.name if folder is not None else model.name
