"""Locating Deeploy's peer tests in ``../shared`` (read in place, never copied)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deeploy_core.ir.dtypes import DataType

PEER_TESTS_VARIABLE = "DEEPLOY_CORE_PEER_TESTS"


@dataclass(frozen=True)
class PeerTest:
    """One test folder: ``network.onnx``, ``inputs.npz``, ``outputs.npz``."""

    name: str
    folder: Path

    @property
    def model(self) -> Path:
        return self.folder / "network.onnx"

    @property
    def inputs(self) -> Path:
        return self.folder / "inputs.npz"

    @property
    def outputs(self) -> Path:
        return self.folder / "outputs.npz"

    @property
    def is_float(self) -> bool:
        """Deeploy's FP32 tests; all others are integer networks exported with float-typed tensors."""
        return "/FP32/" in f"/{self.name}/"

    def input_types(self) -> dict[str, DataType]:
        """Input element types by Deeploy's rule for test data (see the MANIFEST): empty for float tests."""
        if self.is_float:
            return {}
        from deeploy_core.frontend.importer import read_model
        from deeploy_core.validate.data import input_types_from_data

        return input_types_from_data(read_model(self.model), self.inputs)


def peer_tests_root(start: Path | None = None) -> Path | None:
    """``$DEEPLOY_CORE_PEER_TESTS``, else the first ``shared/peer-tests/deeploy`` beside an ancestor folder."""
    if os.environ.get(PEER_TESTS_VARIABLE):
        root = Path(os.environ[PEER_TESTS_VARIABLE])
        return root if root.is_dir() else None
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder.parent / "shared" / "peer-tests" / "deeploy"
        if candidate.is_dir():
            return candidate
    return None


def find_peer_tests(root: Path, contains: str = "") -> list[PeerTest]:
    """Every test folder under ``root`` whose relative path contains ``contains``, sorted."""
    tests = []
    for model in sorted(root.rglob("network.onnx")):
        name = model.parent.relative_to(root).as_posix()
        if contains in f"/{name}/":
            tests.append(PeerTest(name, model.parent))
    return tests
