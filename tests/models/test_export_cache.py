"""Exports are cached outside the repository under a key of the export code and the library versions."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import onnx
import pytest

from tests.models import export
from tests.models.zoo import BY_NAME


@pytest.mark.models
def test_an_export_is_written_once_then_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPLOY_CORE_MODEL_CACHE", str(tmp_path))
    first = export.exported(BY_NAME["gru"], "legacy")
    assert first.parent.parent == tmp_path and first.parent.name == export.cache_key()
    written = first.stat().st_mtime_ns
    assert export.exported(BY_NAME["gru"], "legacy") == first and first.stat().st_mtime_ns == written
    assert [node.op_type for node in onnx.load(first).graph.node].count("GRU") == 1
    assert sorted(path.name for path in first.parent.iterdir()) == ["gru-legacy.onnx"]  # no temporary left behind


def test_the_key_changes_with_a_library_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = export.cache_key()
    real = metadata.version
    monkeypatch.setattr(export.metadata, "version", lambda name: "0.0.1" if name == "torch" else real(name))
    assert export.cache_key() != before
