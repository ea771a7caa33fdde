"""Which transformers export is validated where, and how: the list the tests and ``bench/transformers_table.py`` share.

Every model runs on generic-c with both exporters; the CNN-like ones
(ConvNeXt, MobileViT, SegFormer) also on pulp-cluster with its defaults.  No
compile flags: token ids and masks are the models' own int64 inputs, and
``validate`` draws them within the embedding and as 0/1 masks by itself
(:mod:`deeploy_core.validate.token_inputs`).  Float outputs are judged as the
zoo's are: max |error| over the output's max |value|.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.plugins import PluginHost
from tests.models.cases import FLOAT_RELATIVE_ERROR
from tests.models.judge import Outcome
from tests.models.transformers_export import EXPORTERS, exported
from tests.models.transformers_models import TRANSFORMERS_MODELS, TransformersModel

DEFAULT_RUN = frozenset({("bert", "legacy", "generic-c"), ("convnext", "legacy", "pulp-cluster")})
"""The cases CI runs by default (a text model with token ids and a mask, a CNN-like one tiled on the cluster: both
legacy exports, which take seconds where the dynamo exporter takes tens); the rest run with ``-m heavy_model``."""

KNOWN_FAILURES: dict[str, str] = {}
"""Case id -> why the compiler refuses it today (the test expects that refusal); empty since Resize tiles on the
cluster (SegFormer's decode head upsampled its whole input and output in L1: 65667 bytes, L1 holds 65536)."""


@dataclass(frozen=True)
class TransformersCase:
    model: TransformersModel
    exporter: str
    platform: str

    @property
    def id(self) -> str:
        return f"{self.model.name}-{self.exporter}-{self.platform}"

    @property
    def heavy(self) -> bool:
        return (self.model.name, self.exporter, self.platform) not in DEFAULT_RUN

    def path(self) -> Path:
        return exported(self.model, self.exporter)


def transformers_cases() -> list[TransformersCase]:
    """Every model and exporter on generic-c, the CNN-like ones on pulp-cluster too."""
    return [TransformersCase(model, exporter, platform)
            for model in TRANSFORMERS_MODELS for exporter in EXPORTERS
            for platform in (("generic-c", "pulp-cluster") if model.cnn_like else ("generic-c",))]


@dataclass(frozen=True)
class TransformersOutcome:
    outcome: Outcome
    compile_seconds: float
    """The compiler's stages (import to code generation), without gcc and the run."""


def validate_transformers_case(case: TransformersCase, host: PluginHost,
                               runtime_cache: Path | None = None) -> TransformersOutcome:
    """Compile with the platform's defaults, build, run on seeded inputs drawn by ``validate``, compare with ONNX
    Runtime; raises DeeployError if the compiler refuses the model."""
    path = case.path()
    started = time.perf_counter()
    generated, result = validate_model(path, CompileOptions(platform=case.platform), host, atol=0.0, repeats=1,
                                       cache_dir=runtime_cache)
    stages = generated.timings.get("stages", {})
    seconds = sum(stages.values()) if stages else time.perf_counter() - started
    comparisons = tuple(result.comparisons)
    relative = [comparison.max_relative_error for comparison in comparisons]
    ok = bool(comparisons) and all(error is not None and error <= FLOAT_RELATIVE_ERROR for error in relative)
    return TransformersOutcome(Outcome(comparisons, ok), seconds)
