"""One point of a sweep: a model, the options of one grid cell, and the key under which its result is kept.

The key is what makes a rerun resume: a SHA-256 over the model's bytes (and
the sample data a compile reads), the point's options, the options every
point shares, whether it is validated, and the versions of deeploy-core and
of every loaded plugin.  Paths never enter it (the bytes behind them do), so
a moved checkout resumes; a new plugin version starts over, since its figures
may differ.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from deeploy_core.errors import DeeployError

MODEL_FILE = "network.onnx"
SAMPLE_INPUTS = "inputs.npz"
GOLDEN_OUTPUTS = "outputs.npz"
"""A MODEL given as a folder is Deeploy's test layout: the network and, when present, its sample data."""

TASK_FORMAT = 1
"""Version of the JSON a worker receives; a worker refuses any other (a client and workers of different releases)."""


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes (read again only when its size or modification time changes: a long-lived
    worker sees a model edited between two sweeps)."""
    status = path.stat()
    return _sha256(path, status.st_size, status.st_mtime_ns)


@lru_cache(maxsize=256)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class ModelSource:
    """A MODEL argument: the ONNX file and, for a folder, the sample inputs and golden outputs beside it."""

    given: str
    """As the user wrote it (results.jsonl's ``model``)."""
    path: Path
    inputs: Path | None = None
    outputs: Path | None = None

    @classmethod
    def from_argument(cls, text: str) -> ModelSource:
        """A ``.onnx`` file, or a folder holding ``network.onnx`` (and maybe ``inputs.npz``/``outputs.npz``)."""
        given = Path(text)
        if given.is_dir():
            model = given / MODEL_FILE
            if not model.is_file():
                raise DeeployError(f"sweep: {text} is a folder without {MODEL_FILE}")
            inputs, outputs = given / SAMPLE_INPUTS, given / GOLDEN_OUTPUTS
            return cls(text, model.resolve(), inputs.resolve() if inputs.is_file() else None,
                       outputs.resolve() if outputs.is_file() and inputs.is_file() else None)
        if not given.is_file():
            raise DeeployError(f"sweep: model {text} does not exist")
        return cls(text, given.resolve())

    @property
    def sha256(self) -> str:
        return file_sha256(self.path)

    def data_hashes(self, validate: bool) -> dict[str, str]:
        """The data files this model's points read: sample inputs (input types), golden outputs (validation)."""
        hashes = {}
        if self.inputs is not None:
            hashes["inputs"] = file_sha256(self.inputs)
        if validate and self.outputs is not None:
            hashes["outputs"] = file_sha256(self.outputs)
        return hashes


def short_labels(models: list[ModelSource]) -> dict[str, str]:
    """Each model's shortest distinguishing name: ``miniMobileNet`` and ``Add/Regular`` rather than full paths.

    A folder model is named by its folder (its file is always ``network.onnx``), a file by its stem; where two
    share a name, parent folders are added until the names differ.
    """
    def parts(model: ModelSource) -> list[str]:
        path = Path(model.given)
        named = path if model.path.name == MODEL_FILE and path.is_dir() else path.with_suffix("")
        return [part for part in named.resolve().parts if part not in ("/", "")]

    labels: dict[str, str] = {}
    split = {model.given: parts(model) for model in models}
    for given, own in split.items():
        for depth in range(1, len(own) + 1):
            label = "/".join(own[-depth:])
            if all("/".join(other[-depth:]) != label for name, other in split.items() if name != given):
                break
        labels[given] = label
    return labels


def canonical_json(value: object) -> str:
    """The one JSON text of a value that keys are computed from: sorted keys, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


@dataclass(frozen=True)
class SweepPoint:
    """One compile of the sweep."""

    model: ModelSource
    options: dict[str, Any]
    """This point's grid values, in the order the grid gave the keys (JSON values)."""
    arguments: tuple[str, ...]
    """compile's options for this point (the shared ones, then the grid's), as a command line without MODEL."""
    fixed: dict[str, Any] = field(default_factory=dict)
    """The options every point shares, as given (paths as text)."""
    key: str = ""

    def command_line(self) -> str:
        """The ``deeploy-core compile`` command that makes this point's figures (for results.jsonl); a test folder's
        sample inputs pick the input types there as ``--inputs`` does (which also writes a self-test)."""
        data = ["--inputs", str(self.model.inputs)] if self.model.inputs is not None else []
        data += ["--outputs", str(self.model.outputs)] if self.model.outputs is not None else []
        return shlex.join(["deeploy-core", "compile", str(self.model.path), *data, *self.arguments, "-o", "OUT"])

    def task(self, validate: bool, plugins: Mapping[str, Any], versions: Mapping[str, Any]) -> str:
        """The JSON text a worker receives (:func:`deeploy_core.sweep.task.run_point`)."""
        return json.dumps({
            "format": TASK_FORMAT,
            "key": self.key,
            "model": str(self.model.path),
            "model_sha256": self.model.sha256,
            "inputs": None if self.model.inputs is None else str(self.model.inputs),
            "outputs": None if self.model.outputs is None else str(self.model.outputs),
            "arguments": list(self.arguments),
            "validate": validate,
            "plugins": dict(plugins),
            "versions": dict(versions),
        })


def point_key(model: ModelSource, options: Mapping[str, Any], fixed_identity: Mapping[str, Any], validate: bool,
              versions: Mapping[str, Any]) -> str:
    """The point's key: SHA-256 over what decides its result (see the module docstring)."""
    identity = {
        "model": model.sha256,
        "data": model.data_hashes(validate),
        "options": dict(options),
        "fixed": dict(fixed_identity),
        "validate": validate,
        "versions": dict(versions),
    }
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()
