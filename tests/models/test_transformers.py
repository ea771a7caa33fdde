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
from tests.models.transformers_cases import KNOWN_FAILURES, TransformersCase, transformers_cases, \
    validate_transformers_case

# Looked up without importing it (transformers takes seconds to import; only the exports need it).
pytestmark = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                reason="transformers is not installed: tests/models needs the 'models' extra")


def _param(case: TransformersCase) -> object:
    marks: list[pytest.MarkDecorator] = [pytest.mark.models]
    if case.heavy:
        marks.append(pytest.mark.heavy_model)
    if case.id in KNOWN_FAILURES:
        marks.append(pytest.mark.xfail(raises=DeeployError, reason=KNOWN_FAILURES[case.id], strict=False))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in transformers_cases()])
def test_transformers_export_matches_onnx_runtime(case: TransformersCase, models_host: PluginHost,
                                                  models_runtime_cache: Path) -> None:
    result = validate_transformers_case(case, models_host, models_runtime_cache)
    assert result.outcome.ok, f"{case.id}: {result.outcome.describe()}"
