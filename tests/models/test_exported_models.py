"""Networks exported by torch.onnx.export (TorchScript and dynamo) and quantised by ONNX Runtime, run as C.

Each case exports a torchvision, timm or torch.nn network with random
weights at a small input size (cached, see ``export.py``), compiles it,
builds the C with gcc, runs it on seeded random inputs and compares with
ONNX Runtime: float outputs within 1e-4 of their scale, int8 QDQ outputs
bit-exact (exact mode on generic-c) or within one step (exact mode on a
platform without ONNX Runtime's fused kernels); fixed-point mode computes
TFLite's arithmetic, which has no end-to-end bound against ONNX Runtime, so
each of its quantised layers is compiled alone and held to one step of ONNX
Runtime given ONNX Runtime's inputs.  These are the bounds
docs/fixed-point.rst states.  ``bench/exporter_table.py`` prints the same cases as a
table.  Cases the compiler refuses today (an op no platform implements
yet) expect that refusal, a clean one-line error rather than a traceback
or wrong numbers; they pass outright once the op exists.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.errors import DeeployError
from deeploy_core.plugins import PluginHost
from tests.models.cases import Case, all_cases
from tests.models.judge import validate_case


def _param(case: Case) -> object:
    marks: list[pytest.MarkDecorator] = [pytest.mark.models]
    if case.heavy:
        marks.append(pytest.mark.heavy_model)
    if case.known_failure:
        marks.append(pytest.mark.xfail(raises=DeeployError, reason=case.known_failure, strict=False))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in all_cases()])
def test_exported_network_matches_onnx_runtime(case: Case, models_host: PluginHost, models_runtime_cache: Path) -> None:
    outcome = validate_case(case, models_host, models_runtime_cache)
    assert outcome.ok, f"{case.id} outside {case.bound().describe()}: {outcome.describe()}"
