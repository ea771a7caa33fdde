"""HuggingFace transformers at small configs, exported by both torch exporters, validated as C against ONNX Runtime.

BERT, DistilBERT and GPT-2 (token ids and an attention mask as int64
inputs), ViT, the Whisper encoder, Wav2Vec2, and the CNN-like MobileViT,
ConvNeXt and SegFormer (also tiled on pulp-cluster), with random weights
from their config classes (``transformers_models.py``; no download),
exported once and cached (``transformers_export.py``).  Each compiles with
the platform's defaults and no flag: ``validate`` draws the token ids within
the embedding and the masks as 0/1 itself.  Outputs are judged as the zoo's
float cases: max |error| within 1e-4 of the output's max |value|.

Two cases run by default (a text model with ids and a mask on generic-c, a
CNN-like one tiled on pulp-cluster; legacy exports, seconds each); the rest
are marked ``heavy_model`` (the dynamo exporter alone takes 10-70 s per
model).  Cases the compiler refuses today (an op no platform implements yet)
are expected failures with that clean refusal, and pass once the op exists;
``bench/transformers_table.py`` prints the whole set as a table.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from deeploy_core.errors import DeeployError
from deeploy_core.plugins import PluginHost
from tests.models import transformers_export
from tests.models.transformers_cases import KNOWN_FAILURES, TransformersCase, transformers_cases, \
    validate_transformers_case
from tests.models.transformers_models import TRANSFORMERS_MODELS

# Looked up without importing it (transformers takes seconds to import; only the exports need it).
needs_transformers = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                        reason="transformers is not installed: tests/models needs the 'models' extra")


def _param(case: TransformersCase) -> object:
    marks: list[pytest.MarkDecorator] = [pytest.mark.models]
    if case.heavy:
        marks.append(pytest.mark.heavy_model)
    if case.id in KNOWN_FAILURES:
        marks.append(pytest.mark.xfail(raises=DeeployError, reason=KNOWN_FAILURES[case.id], strict=False))
    return pytest.param(case, id=case.id, marks=marks)


@needs_transformers
@pytest.mark.parametrize("case", [_param(case) for case in transformers_cases()])
def test_transformers_export_matches_onnx_runtime(case: TransformersCase, models_host: PluginHost,
                                                  models_runtime_cache: Path) -> None:
    result = validate_transformers_case(case, models_host, models_runtime_cache)
    assert result.outcome.ok, f"{case.id}: {result.outcome.describe()}"


def test_the_export_key_changes_with_the_transformers_version(monkeypatch: pytest.MonkeyPatch) -> None:
    real = transformers_export.metadata.version
    monkeypatch.setattr(transformers_export.metadata, "version", lambda name: "0.0.1")
    older = transformers_export.cache_key()
    monkeypatch.setattr(transformers_export.metadata, "version", real)
    assert transformers_export.cache_key() != older


def test_cases_cover_every_model_on_generic_c_and_the_cnn_like_ones_on_the_cluster() -> None:
    cases = transformers_cases()
    assert {(case.model.name, case.exporter) for case in cases if case.platform == "generic-c"} == {
        (model.name, exporter) for model in TRANSFORMERS_MODELS for exporter in ("legacy", "dynamo")}
    assert {case.model.name for case in cases if case.platform == "pulp-cluster"} == {"mobilevit", "convnext",
                                                                                       "segformer"}
    assert sum(not case.heavy for case in cases) == 2, "CI's default run keeps two cases"
