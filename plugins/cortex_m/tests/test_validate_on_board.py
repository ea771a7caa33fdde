"""``deeploy-core validate`` on the Cortex-M platforms runs on their emulated boards (issue 35).

The core's tests (tests/test_validate_on_board.py) cover cortex-m4 in depth;
here each core the plugin registers is validated once on its own board, with
CMSIS-NN named through the platform's option (the Makefile's default root), so
the bench can rely on the counts of both.  Skips, naming what is missing,
without arm-none-eabi-gcc with newlib, qemu-system-arm, the counter's packages
or the peer tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.testing.cli_outcomes import CliLab, CliOutcome
from deeploy_core.testing.emulated_targets import CORTEX_M4_MPS2
from deeploy_core.emulation.instruction_counting import missing as counter_missing
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.testing.report_schema import schema_violations

ROOT = peer_tests_root(Path(__file__).parent)
CMSIS_NN = next((folder / "shared" / "third-party" / "cmsis-nn" for folder in Path(__file__).resolve().parents
                 if (folder / "shared" / "third-party" / "cmsis-nn" / "Include" / "arm_nnfunctions.h").is_file()), None)
MISSING = CORTEX_M4_MPS2.missing() or counter_missing() or (
    "Deeploy peer tests not found: ../shared/peer-tests/deeploy" if ROOT is None else None)
BOARDS = {"cortex-m4": "mps2-an386", "cortex-m7": "mps2-an500"}


def validate_kws(platform: str, tmp_path: Path) -> CliOutcome:
    """``deeploy-core validate`` of the KWS peer on ``platform``'s board, CMSIS-NN named through the option."""
    assert ROOT is not None
    peer = {test.name: test for test in find_peer_tests(ROOT)}["Models/MLPerf/KeywordSpotting"]
    assert peer.inputs is not None and peer.outputs is not None
    option = ["--option", f"cmsis_nn_path={CMSIS_NN}"] if CMSIS_NN is not None else []
    return CliLab(tmp_path, {"DEEPLOY_CORE_PLUGINS": "generic-c,cortex-m"}).run(
        "validate", peer.model, "--platform", platform, "--inputs", str(peer.inputs), "--outputs", str(peer.outputs),
        "--repeats", "1", "--quiet", *option)


@pytest.mark.skipif(MISSING is not None, reason=f"cannot validate on the emulated boards: {MISSING}")
@pytest.mark.parametrize("platform", sorted(BOARDS))
def test_kws_validates_on_the_platforms_board_with_counts(platform: str, tmp_path: Path) -> None:
    outcome = validate_kws(platform, tmp_path)
    assert outcome.ok, outcome.describe()
    assert f"per inference on {BOARDS[platform]}: " in outcome.stdout
    assert outcome.report is not None and schema_violations(outcome.report) == []
    target = outcome.report["target"]
    assert target["board"] == BOARDS[platform] and target["inferences"] == 1
    assert [layer["index"] for layer in target["layers"]] == list(range(len(outcome.report["layers"])))
    assert sum(layer["instructions"] for layer in target["layers"]) == target["instructions"]


@pytest.mark.skipif(CORTEX_M4_MPS2.missing() is not None or ROOT is None,
                    reason=f"cannot validate on the emulated boards: {CORTEX_M4_MPS2.missing() or 'no peer tests'}")
@pytest.mark.parametrize(("platform", "board"), [("cortex-m33", "mps2-an505"), ("cortex-m55", "mps3-an547")])
def test_the_cortex_m33_and_m55_are_counted_from_qemu_s_trace(platform: str, board: str, tmp_path: Path) -> None:
    """Unicorn has no Helium and the M33's board has another memory map: their instructions come from QEMU's own
    execution trace, per layer, without a cycle estimate (no timing model for these cores), and the report says
    which counter ran."""
    outcome = validate_kws(platform, tmp_path)
    assert outcome.ok, outcome.describe()
    assert f"per inference on {board}: " in outcome.stdout and "no cycle estimate (counted from " \
           "qemu-system-arm's trace" in outcome.stdout, outcome.stdout
    assert outcome.report is not None and schema_violations(outcome.report) == []
    target = outcome.report["target"]
    assert target["board"] == board and target["counter"] == "qemu-trace" and target["inferences"] == 1
    assert "estimated_cycles" not in target and "cycle_model" not in target
    assert [layer["index"] for layer in target["layers"]] == list(range(len(outcome.report["layers"])))
    assert sum(layer["instructions"] for layer in target["layers"]) == target["instructions"] > 0
