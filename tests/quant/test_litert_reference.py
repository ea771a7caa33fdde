"""``validate --reference MODEL.tflite``: LiteRT's reference kernels on the file are the reference.

The checks are in :mod:`tests.support.litert_reference_effect` (the
option-effects table runs them too); the missing-package error is tested
without the extra, by hiding it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from deeploy_core.errors import DeeployError
from deeploy_core.validate.litert_reference import MISSING, run_litert_reference
from tests.quant.extra import LITERT, needs

ENVIRON = {"DEEPLOY_CORE_PLUGINS": "generic-c", "CFLAGS": "-O0", "COLUMNS": "200"}


def _run(args: Sequence[str]) -> Result:
    from deeploy_core.cli.app import cli

    result = CliRunner().invoke(cli, list(args), env=ENVIRON)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.mark.quant
@needs(*LITERT)
def test_validate_compares_with_litert_on_the_named_tflite(tmp_path: Path) -> None:
    from tests.support.litert_reference_effect import check_reference_effect

    check_reference_effect(_run, tmp_path)


def test_without_ai_edge_litert_the_reference_is_one_line_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ai_edge_litert", None)
    monkeypatch.setitem(sys.modules, "ai_edge_litert.interpreter", None)
    with pytest.raises(DeeployError) as raised:
        run_litert_reference(tmp_path / "model.tflite", {}, [])
    assert str(raised.value) == MISSING and "quant extra" in MISSING and "\n" not in MISSING


def test_a_reference_that_is_not_tflite_is_refused_before_compiling(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"")
    result = _run(["validate", str(model), "--platform", "generic-c", "--reference", str(model)])
    assert result.exit_code != 0 and "--reference model.onnx: not a .tflite file" in result.stderr, result.stderr
