"""``validate`` on a platform with a board (issue 35): the network runs on QEMU, not the host, and is counted.

The comparison must really judge the board's outputs: a golden output off by
one fails with exit 1.  Instruction counts come from the same ELF under the
counter, are deterministic, and land in report.json's ``target`` section,
which the schema describes.  A missing emulator or cross compiler, and a
missing CMSIS_NN_PATH, are one-line errors.  Needs the Cortex-M plugin,
arm-none-eabi-gcc with newlib, qemu-system-arm and the peer tests; the counts
need unicorn, capstone and pyelftools.  Skips naming what is missing.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from deeploy_core.codegen.api_names import DEFAULT_API
from deeploy_core.errors import DeeployError
from deeploy_core.ir.tensor_spec import TensorSpec
from deeploy_core.testing.cli_outcomes import CliLab, CliOutcome
from deeploy_core.testing.emulated_targets import CORTEX_M4_MPS2
from deeploy_core.emulation.instruction_counting import missing as counter_missing
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.testing.report_schema import schema_violations
from deeploy_core.validate.board_harness import board_harness_source, parse_outputs

ROOT = peer_tests_root(Path(__file__).parent)
KWS, GEMM = "Models/MLPerf/KeywordSpotting", "Kernels/FP32/GEMM/Regular"
NO_PLUGIN = None if importlib.util.find_spec("deeploy_cortex_m") else "the Cortex-M plugin (deeploy_cortex_m) is missing"
NO_BOARD = NO_PLUGIN or CORTEX_M4_MPS2.missing()
NO_COUNTER = counter_missing()
PLUGINS = {"DEEPLOY_CORE_PLUGINS": "generic-c,cortex-m"}

needs_board = pytest.mark.skipif(NO_BOARD is not None, reason=f"cannot validate on an emulated Cortex-M4: {NO_BOARD}")
needs_peers = pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy")
needs_counter = pytest.mark.skipif(NO_COUNTER is not None, reason=f"cannot count instructions: {NO_COUNTER}")


def peer(name: str) -> tuple[Path, Path, Path]:
    assert ROOT is not None
    found = {test.name: test for test in find_peer_tests(ROOT)}[name]
    assert found.inputs is not None and found.outputs is not None
    return found.model, found.inputs, found.outputs


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> CliLab:
    return CliLab(tmp_path_factory.mktemp("on-board"), PLUGINS)


def validate(lab: CliLab, name: str, outputs: Path | None = None, platform: str = "cortex-m4") -> CliOutcome:
    model, inputs, golden = peer(name)
    return lab.run("validate", model, "--platform", platform, "--inputs", str(inputs), "--outputs",
                   str(outputs or golden), "--quiet")


@needs_board
@needs_peers
@needs_counter
@pytest.mark.parametrize("name", [KWS, GEMM])
def test_a_peer_passes_on_the_board_with_instruction_counts(lab: CliLab, name: str) -> None:
    outcome = validate(lab, name)
    assert outcome.ok, outcome.describe()
    assert "best RunNetwork time" not in outcome.stdout  # no host clock on the board
    assert "per-layer instructions of network.onnx on mps2-an386" in outcome.stdout
    assert "per inference on mps2-an386: " in outcome.stdout and "inside CMSIS-NN (arm_*): " in outcome.stdout
    assert outcome.report is not None
    target = outcome.report["target"]
    assert schema_violations(outcome.report) == []
    assert (target["board"], target["emulator"]) == ("mps2-an386", "qemu-system-arm")
    assert len(target["layers"]) == len(outcome.report["layers"])
    assert sum(layer["instructions"] for layer in target["layers"]) == target["instructions"] > 0
    assert target["instructions"] <= target["estimated_cycles"] and target["inferences"] == 3
    assert 0 <= target["cmsis_nn_instructions"] <= target["instructions"]


@needs_board
@needs_peers
@needs_counter
def test_counts_are_deterministic(lab: CliLab, tmp_path: Path) -> None:
    first = validate(lab, GEMM)
    again = validate(CliLab(tmp_path, PLUGINS), GEMM)
    assert first.ok and again.ok, again.describe()
    assert first.report is not None and again.report is not None
    assert first.report["target"] == again.report["target"]


@needs_board
@needs_peers
def test_a_wrong_golden_output_fails_on_the_board(lab: CliLab, tmp_path: Path) -> None:
    """Off by one in a single element: only a comparison of what the board computed can notice."""
    golden = dict(np.load(peer(KWS)[2]))
    key = next(iter(golden))
    golden[key] = golden[key].copy()
    golden[key].flat[0] += 1
    np.savez(tmp_path / "wrong.npz", **golden)
    outcome = validate(lab, KWS, tmp_path / "wrong.npz")
    assert outcome.exit_code == 1, outcome.describe()
    assert "MISMATCH" in outcome.stdout and "1/12" in outcome.stdout
    assert outcome.error_lines, outcome.describe()


def tools_only(tmp_path: Path, *tools: str) -> str:
    """A PATH of one folder holding links to ``tools`` only (the rest of the toolchain seems uninstalled)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in tools:
        target = next(Path(entry) / tool for entry in os.environ["PATH"].split(os.pathsep)
                      if (Path(entry) / tool).exists())
        (folder / tool).symlink_to(target)
    return str(folder)


@needs_board
@needs_peers
@pytest.mark.parametrize(("present", "absent", "package"), [
    (("make", "arm-none-eabi-gcc"), "qemu-system-arm", "qemu-system-arm"),
    (("make", "qemu-system-arm"), "arm-none-eabi-gcc", "gcc-arm-none-eabi"),
])
def test_a_missing_tool_is_one_line_naming_the_package(tmp_path: Path, present: tuple[str, ...], absent: str,
                                                       package: str) -> None:
    model, inputs, golden = peer(GEMM)
    outcome = CliLab(tmp_path / "runs", PLUGINS).invoke(
        ["validate", str(model), "--platform", "cortex-m4", "--inputs", str(inputs), "--outputs", str(golden),
         "--quiet"], {"PATH": tools_only(tmp_path, *present)})
    assert outcome.exit_code == 2, outcome.describe()
    assert len(outcome.error_lines) == 1 and absent in outcome.error_lines[0], outcome.describe()
    assert package in outcome.error_lines[0]


@needs_board
@needs_peers
def test_a_missing_cmsis_nn_path_is_the_makefiles_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A network whose folder needs CMSIS-NN sources, built without CMSIS_NN_PATH: the Makefile's one line."""
    from deeploy_core.api import CompileOptions, compile_model, reference_inputs
    from deeploy_core.plugins import PluginHost
    from deeploy_core.validate.board_run import validate_on_board
    from deeploy_cortex_m import plugin as cortex_m_plugin
    from deeploy_cortex_m.cmsis_nn import cmsis_nn
    from deeploy_generic_c import plugin as generic_c_plugin

    monkeypatch.delenv("CMSIS_NN_PATH", raising=False)
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c")
    host.add_plugin(cortex_m_plugin, name="cortex-m")
    model, inputs, _ = peer(GEMM)
    _, generated = compile_model(model, CompileOptions(platform="cortex-m4"), host)
    needing = replace(generated, runtime=replace(generated.runtime, external=(cmsis_nn(("Source/x.c",)),)))
    with pytest.raises(DeeployError) as raised:
        validate_on_board(needing, tmp_path / "out", reference_inputs(model, inputs), 1)
    message = str(raised.value)
    assert "CMSIS_NN_PATH" in message and "\n" not in message and not raised.value.details


def test_the_harness_embeds_inputs_and_its_printed_outputs_parse() -> None:
    """No toolchain needed: the C text holds the input bytes; printed lines parse back, a short print is refused."""
    spec_in = TensorSpec("x", "int16", (2,))
    spec_out = TensorSpec("y", "float32", (3,))
    source = board_harness_source([spec_in], [spec_out], {"x": np.array([1, -2], dtype=np.int16)}, 2, DEFAULT_API)
    assert "0x01, 0x00, 0xfe, 0xff" in source and "DeeployNetwork_profile_mark" in source
    values = np.array([1.5, -2.0, 3.25], dtype=np.float32).tobytes().hex()
    printed = f"hello\ndc_output 0 0 {values[:8]}\ndc_output 0 4 {values[8:]}\n"
    assert parse_outputs(printed, [spec_out])[0].tolist() == [1.5, -2.0, 3.25]
    with pytest.raises(DeeployError, match="stopped early"):
        parse_outputs(printed.splitlines()[1], [spec_out])


def test_long_layer_names_keep_both_ends_in_the_per_layer_tables() -> None:
    """tf2onnx's node names run to hundreds of characters; the board and --profile tables show their two ends."""
    from deeploy_core.cli.table_output import LABEL_WIDTH, clipped_label

    first = "dscnn_1/activation_1/Relu;" + "x" * 200 + ";conv2d_1/convolution"
    second = "dscnn_1/activation_1/Relu;" + "x" * 200 + ";conv2d_2/convolution"
    assert len(clipped_label(first)) == LABEL_WIDTH and clipped_label(first) != clipped_label(second)
    assert clipped_label(first).startswith("dscnn_1/activation_1/Relu;") and clipped_label(first).endswith("convolution")
    assert clipped_label("Conv_16_rq") == "Conv_16_rq"


def test_a_board_that_names_no_counter_is_reported_uncounted_and_says_so(tmp_path: Path) -> None:
    """``BoardSupport.counter = ""``: the run stands (its outputs were compared) and the record says why there
    are no counts; nothing is emulated again."""
    from deeploy_core.platform.board import BoardSupport
    from deeploy_core.validate.board_run import count_on_board

    board = BoardSupport(name="some-board", compiler="arm-none-eabi-gcc", arch_flags=("-mcpu=cortex-m4",),
                         emulator=("qemu-system-arm", "-M", "some-board", "-kernel"), counter="")
    run = count_on_board(board, tmp_path / "never-built.elf", None, "")  # type: ignore[arg-type]
    assert (run.board, run.emulator, run.counts) == ("some-board", "qemu-system-arm", None)
    assert run.note == "not counted: the platform's board names no instruction counter"
    assert run.report_section({}) == {"board": "some-board", "emulator": "qemu-system-arm", "note": run.note}
