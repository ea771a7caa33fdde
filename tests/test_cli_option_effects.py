"""Every option of ``compile``, ``validate``, ``analyze``, ``supported-ops`` and of the command group does what
its help says.

The options are enumerated from the click commands themselves, and each one
must have an entry in the effects tables below: an option added without a
test of its effect fails :func:`test_option_has_the_documented_effect` with
its own help text in the message.  An entry runs a command with two or more
values of the option (or with and without a flag) and asserts what changes:
report.json, the generated C, the files written, the printed result or the
verdict.  The options every compiling command shares (``model_options``,
``--quiet``) are checked on all three commands, each where it leaves its
results (compile: the output folder, validate: the build folder, analyze:
its ``--json`` print).

Where an option has no visible effect on the usual test network, the entry
uses a network or platform where it has one and says why in its ``reason``.
Compile's C-API and self-test options are judged on the built output folder
(``make test``'s verdict, the sections of an object file; see
``cli_effects_folder.py``).  Only options are enumerated: the MODEL argument
is what every entry varies the options against.  Validate and ``make`` build
with ``CFLAGS=-O0``: the options' effects do not depend on optimisation, and
it halves the build time.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Callable

import click
import numpy as np
import onnx
import pytest
import yaml

from deeploy_core.builtin.plugin import DOUBLE_BUFFERING, SINGLE_BUFFERING, host_two_level_hierarchy
from deeploy_core.testing.cli_outcomes import COMPILING_COMMANDS, CliLab, CliOutcome
from deeploy_core.testing.models import conformance_model
from tests.support.option_models import (
    QDQ_OUTPUT_SCALE, dynamic_conv, integer_conv, qdq_conv, two_branch_mlp,
)
from deeploy_core.validate.reference import run_reference
from tests.cli_effects_folder import make, object_sections, self_test_passes

GROUP = "deeploy-core"
LISTING_COMMANDS = ("supported-ops",)
"""Commands that compile nothing but whose options are enumerated too (their entries are in OWN_EFFECTS)."""
PLUGINS = "generic-c,pulp-cluster,minimalloc,tetris"
ENVIRON = {"DEEPLOY_CORE_PLUGINS": PLUGINS, "CFLAGS": "-O0", "COLUMNS": "200"}
SMALL_L1 = "8000"
"""An L1 size at which the catalogue CNN's first convolution needs several tiles."""


# -- enumeration ----------------------------------------------------------------------------------------------------


def option_name(option: click.Option) -> str:
    """The long spelling (``--output`` for ``-o/--output``), the key of the effects tables."""
    return max(option.opts, key=len)


def enumerated_options() -> list[tuple[str, click.Option]]:
    """(command, option) for the group's own options and every option of the compiling commands."""
    from deeploy_core.cli.app import cli

    found = [(GROUP, param) for param in cli.params if isinstance(param, click.Option)]
    context = click.Context(cli)
    for command in (*COMPILING_COMMANDS, *LISTING_COMMANDS):
        loaded = cli.get_command(context, command)
        assert loaded is not None, command
        found += [(command, param) for param in loaded.params if isinstance(param, click.Option)]
    return found


# -- the workspace: models, data files and the remembering runner --------------------------------------------------


class Workspace:
    """Models and data files in one folder, and a :class:`CliLab` whose arguments may name them as ``@file``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lab = CliLab(root / "runs", ENVIRON)
        self.models: dict[str, Path] = {}
        for name, make in (("cnn", lambda: conformance_model("cnn")), ("two_branch_mlp", two_branch_mlp),
                           ("dynamic_conv", dynamic_conv), ("integer_conv", integer_conv), ("qdq_conv", qdq_conv)):
            self.models[name] = root / f"{name}.onnx"
            onnx.save(make(), self.models[name])
        self._write_data()

    def _write_data(self) -> None:
        rng = np.random.default_rng(11)
        levels = {"levels": [{"name": "L2", "neighbours": ["L1"], "size": 4_000_000},
                             {"name": "L1", "neighbours": ["L2"], "size": 4000}],
                  "default": "L2", "compute": "L1", "alignment": 8}
        (self.root / "levels.yaml").write_text(yaml.safe_dump(levels), encoding="utf-8")
        levels["levels"][1]["size"] = 300_000  # more L1 than the cluster has
        (self.root / "large_l1.yaml").write_text(yaml.safe_dump(levels), encoding="utf-8")
        ramp = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
        np.savez(self.root / "int8.npz", x=ramp - 16)           # Deeploy's rule: int8
        np.savez(self.root / "uint8.npz", x=ramp * 7)           # uint8
        np.savez(self.root / "float.npz", x=ramp / 3)           # float32
        np.savez(self.root / "small_ints.npz", x=ramp * 3)      # 0..93: valid data for both int8 and uint8
        np.savez(self.root / "int8_stored.npz", x=(ramp - 16).astype(np.int8))  # integers stored as such: the
        np.savez(self.root / "uint8_stored.npz", x=(ramp * 7).astype(np.uint8))  # rule's types are tried first
        for name in ("a", "b"):
            np.savez(self.root / f"cnn_{name}.npz", x=rng.standard_normal((1, 3, 16, 16)).astype(np.float32))
        cnn_a = self.arrays("cnn_a.npz")
        [golden] = run_reference(self.models["cnn"], {"x": cnn_a[0]})
        np.savez(self.root / "golden.npz", y=golden)
        wrong = golden.copy()
        wrong.flat[0] += 1.0
        np.savez(self.root / "golden_wrong.npz", y=wrong)
        near = golden.copy()
        near.flat[0] += 0.01
        np.savez(self.root / "golden_near.npz", y=near)
        np.savez(self.root / "golden_scaled.npz", y=golden * np.float32(1.01))
        qdq_inputs = {"x": rng.uniform(-3, 3, (1, 2, 6, 6)).astype(np.float32)}
        np.savez(self.root / "qdq_inputs.npz", **qdq_inputs)
        [qdq_golden] = run_reference(self.models["qdq_conv"], qdq_inputs)
        one_step = qdq_golden.copy()
        one_step.flat[5] += np.float32(QDQ_OUTPUT_SCALE)
        np.savez(self.root / "qdq_golden_one_step.npz", y=one_step)

    def arrays(self, name: str) -> list[np.ndarray]:
        with np.load(self.root / name) as archive:
            return [archive[key] for key in archive.files]

    def file(self, name: str) -> Path:
        """A data file; ``min_tiling.json`` is the report of a compile with ``--tiling-strategy min``."""
        if name == "min_tiling.json" and not (self.root / name).exists():
            source = self.min_tiling_compile()
            (self.root / name).write_bytes(source.files["report.json"])
        return self.root / name

    def min_tiling_compile(self) -> CliOutcome:
        outcome = self.lab.run("compile", self.models["cnn"], "--l1", SMALL_L1, "--tiling-strategy", "min",
                               "--fusion", "none")
        assert outcome.ok, outcome.describe()
        return outcome

    def run(self, command: str, model: str, *args: str) -> CliOutcome:
        """``command`` on a workspace model; an argument ``@name`` is the path of data file ``name``."""
        resolved = [str(self.file(arg[1:])) if arg.startswith("@") else arg for arg in args]
        return self.lab.run(command, self.models[model], *resolved)

    def invoke(self, *args: str, plugins: str = PLUGINS) -> CliOutcome:
        return self.lab.invoke(list(args), {"DEEPLOY_CORE_PLUGINS": plugins})


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("option_effects"))


# -- helpers for the checks ----------------------------------------------------------------------------------------


def reports(outcomes: list[CliOutcome]) -> list[dict]:
    """The reports of runs that must all have succeeded (validate: compiled, built, run and matched)."""
    for outcome in outcomes:
        assert outcome.ok and outcome.report is not None, outcome.describe()
    return [outcome.report for outcome in outcomes]  # type: ignore[misc]


def network_c(outcomes: list[CliOutcome]) -> list[str] | None:
    """Network.c of each run, or None for a command that writes no code (analyze)."""
    texts = [outcome.text("Network.c") for outcome in outcomes]
    if all(text is None for text in texts):
        return None
    assert all(text is not None for text in texts), [outcome.args for outcome in outcomes]
    return texts  # type: ignore[return-value]


def one_error(outcome: CliOutcome, pattern: str) -> re.Match[str]:
    """Exit code 2 and a single ``error:`` line on stderr that matches ``pattern``; no traceback."""
    assert outcome.exit_code == 2, outcome.describe()
    assert "Traceback" not in outcome.stderr
    [line] = outcome.error_lines
    found = re.search(pattern, line)
    assert found, line
    return found


def capacities(report: dict) -> dict[str, int | None]:
    return {level: entry["capacity"] for level, entry in report["memory_levels"].items()}


def tiles(report: dict) -> list[int]:
    return [layer["tiles"] for layer in report["tiling"]["layers"]]


def slots(report: dict) -> set[int]:
    return {buffer["slots"] for layer in report["tiling"]["layers"] for buffer in layer["buffers"].values()}


def kernels(report: dict) -> list[str]:
    return [layer["kernel"] for layer in report["layers"]]


BUILTIN_LEVELS = {level.name: level.size for level in host_two_level_hierarchy().levels}
"""Capacities of the built-in ``l2-l1`` hierarchy (its registration describes them)."""


# -- checks of the options every compiling command shares ---------------------------------------------------------


def check_platform(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    generic, cluster = reports(outcomes)
    assert (generic["platform"], cluster["platform"]) == ("generic-c", "pulp-cluster")
    assert "cluster" not in generic and "estimate" not in generic
    assert cluster["cluster"]["cores"] >= 1 and cluster["estimate"]["cycles"] > 0
    if code := network_c(outcomes):
        assert "pulp_cluster_fork(" not in code[0] and "pulp_cluster_fork(" in code[1]


def check_memory_level(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    own, named = reports(outcomes)
    assert capacities(own) == {level: own["cluster"]["level_sizes"][level] for level in ("L1", "L2")}
    assert capacities(named) == BUILTIN_LEVELS != capacities(own)


def check_buffering_scheme(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    """Shared by --tiler and --buffering: the second run double-buffers, the first does not."""
    single, double = reports(outcomes)
    assert (single["tiling"]["tiler"], double["tiling"]["tiler"]) == (SINGLE_BUFFERING, DOUBLE_BUFFERING)
    assert single["memory_levels"]["L1"]["buffering"] == "single"
    assert double["memory_levels"]["L1"]["buffering"] == "double"
    assert slots(single) == {1} and 2 in slots(double)
    if code := network_c(outcomes):
        assert "slot = t & 1" not in code[0] and "slot = t & 1" in code[1]


def check_allocator(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    greedy, optimal = (report["memory"] for report in reports(outcomes))
    assert (greedy["allocator"], optimal["allocator"]) == ("first-fit", "minimalloc")
    assert optimal["arena_bytes"] == optimal["lower_bound_bytes"] < greedy["arena_bytes"]
    assert [b["offset"] for b in greedy["buffers"]] != [b["offset"] for b in optimal["buffers"]]
    if code := network_c(outcomes):
        for text, memory in zip(code, (greedy, optimal)):
            assert f"uint8_t u8[{memory['arena_bytes']}]" in text


def check_input_shape(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    small, batched = reports(outcomes[:2])
    assert small["layers"][0]["inputs"][0]["shape"] == [1, 2, 8, 8]
    assert small["layers"][-1]["outputs"][0]["shape"] == [1, 4, 8, 8]
    assert batched["layers"][0]["inputs"][0]["shape"] == [2, 2, 4, 6]
    assert batched["layers"][-1]["outputs"][0]["shape"] == [2, 4, 4, 6]
    one_error(outcomes[2], r"dynamic dimension .*--input-shape")
    if code := network_c(outcomes[:2]):
        assert "[1, 2, 8, 8]" in code[0] and "[2, 2, 4, 6]" in code[1]


def check_input_types(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    """Shared by --input-type and --input-types-from: int8, uint8 and float32 inputs, in that order."""
    typed = reports(outcomes)
    assert [report["layers"][0]["inputs"][0]["dtype"] for report in typed] == ["int8", "uint8", "float32"]
    assert [kernels(report)[0] for report in typed] == ["Conv integer", "Conv integer", "Conv float32"]
    if code := network_c(outcomes):
        c_types = [re.search(r"static (\w+) \*dc_in_x;", text) for text in code]
        assert [found.group(1) if found else None for found in c_types] == ["int8_t", "uint8_t", "float"]


def check_memory_hierarchy(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    untiled, by_name, by_file = reports(outcomes)
    assert "memory_levels" not in untiled and "tiling" not in untiled
    assert capacities(by_name) == BUILTIN_LEVELS
    assert capacities(by_file) == {"L1": 4000, "L2": 4_000_000}
    assert max(tiles(by_name)) == 1 < max(tiles(by_file))
    if code := network_c(outcomes):
        assert len(set(code)) == 3


def check_l1(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    small, large = reports(outcomes)
    assert (capacities(small)["L1"], capacities(large)["L1"]) == (4000, 64000)
    assert [report["options"]["memory_level"] for report in (small, large)] == [
        {"name": "l2-l1", "values": {"l1": size, "l2": None}} for size in (4000, 64000)]
    assert tiles(small)[0] > 1 and set(tiles(large)) == {1}
    assert small["memory_levels"]["L1"]["used"] <= 4000
    if code := network_c(outcomes):
        assert code[0] != code[1]


def check_l2(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    unbounded, bounded = reports(outcomes[:2])
    assert (capacities(unbounded)["L2"], capacities(bounded)["L2"]) == (None, 100_000)
    needed = one_error(outcomes[2], r"L2 needs at least (\d+) bytes .* but has 1000$")
    assert int(needed.group(1)) == bounded["memory_levels"]["L2"]["used"]


def check_l3(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    default, sized = reports(outcomes[:2])
    assert sized["cluster"]["level_sizes"]["L3"] == 1_000_000 != default["cluster"]["level_sizes"]["L3"]
    if code := network_c(outcomes[:2]):
        assert "1000000u" not in code[0] and "1000000u" in code[1]
    one_error(outcomes[2], r"^error: --l3: the memory hierarchy has no level L3 to resize")


def check_cores(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    two, eight = reports(outcomes)
    for report, cores in ((two, 2), (eight, 8)):
        assert report["options"]["platform"] == {"name": "pulp-cluster", "values": {"cores": cores}}
        assert report["cluster"]["cores"] == cores and len(report["estimate"]["macs_per_core"]) == cores
        for layer in report["tiling"]["layers"]:
            assert layer["cluster"]["cores"] == cores and len(layer["cluster"]["work"]) == cores
    for few, many in zip(two["tiling"]["layers"], eight["tiling"]["layers"]):
        assert sum(few["cluster"]["work"]) == sum(many["cluster"]["work"]), few["layer"]
    assert max(two["tiling"]["layers"][0]["cluster"]["work"]) > max(eight["tiling"]["layers"][0]["cluster"]["work"])
    if code := network_c(outcomes):
        assert "single buffering, 2 cores */" in code[0] and "single buffering, 8 cores */" in code[1]


def check_tiling_strategy(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    fewest, smallest = reports(outcomes[:2])
    assert (fewest["tiling"]["strategy"], smallest["tiling"]["strategy"]) == ("max", "min")
    assert [report["options"]["tiler"]["values"] for report in (fewest, smallest)] == [
        {"strategy": "max", "fusion": "none"}, {"strategy": "min", "fusion": "none"}]
    assert sum(tiles(smallest)) > sum(tiles(fewest))
    one_error(outcomes[2], r"^error: --tiling-strategy min: tiling is off, so no tiler uses a strategy; turn tiling "
                           r"on with --l1, --memory-level or --tiler, or drop the option$")


def check_fusion(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    alone, fused = reports(outcomes[:2])
    assert (alone["tiling"]["fusion"], fused["tiling"]["fusion"]) == ("none", "auto")
    assert alone["tiling"]["patterns"] == [] and len(fused["tiling"]["patterns"]) >= 1
    moved = [report["traffic"]["L2->L1"] + report["traffic"]["L1->L2"] for report in (alone, fused)]
    assert moved[1] < moved[0], moved
    assert sum(pattern["bytes_in"] + pattern["bytes_out"] for pattern in fused["tiling"]["patterns"]) > 0
    if code := network_c(outcomes[:2]):
        assert "fused pattern" not in code[0] and "fused pattern" in code[1]
    one_error(outcomes[2], r"^error: --fusion auto: tiling is off, so there are no layers to fuse; turn tiling on "
                           r"with --l1, --memory-level or --tiler, or drop the option$")


def check_tiling_from(workspace: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    fresh, reused = reports(outcomes)
    source = workspace.min_tiling_compile()
    assert source.report is not None
    assert reused["tiling"]["solution"] == source.report["tiling"]["solution"] != fresh["tiling"]["solution"]
    assert reused["tiling"]["memory_map"] == source.report["tiling"]["memory_map"]
    assert tiles(reused) == tiles(source.report) != tiles(fresh)
    if code := network_c(outcomes):
        assert code[1] == source.text("Network.c") != code[0]


def check_quantization(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    """exact: ONNX Runtime's float32 requantisation; fixed-point: TFLite's integer one (the report says which)."""
    exact, fixed = reports(outcomes)
    assert kernels(exact) == ["QuantizeLinear", "QLinearConv int32, float32 requantisation", "DequantizeLinear"]
    assert kernels(fixed) == ["QuantizeLinear", "QLinearConv int32, TFLite requantisation", "DequantizeLinear"]
    assert [layer["requantization"]["arithmetic"] for layer in (exact["layers"][1], fixed["layers"][1])] == [
        "float32", "tflite"]
    if code := network_c(outcomes):
        assert code[0] != code[1]


def check_code_transformation(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    plain, named = outcomes
    assert plain.ok and plain.report is not None, plain.describe()
    assert {tuple(layer["code_transformations"]) for layer in plain.report["layers"]} == {
        ("memory-passthrough", "closure")}, "no installed transformation runs unless it is named"
    one_error(named, r"^error: --code-transformation dc-not-installed, but no installed plugin registers a code "
                     r"transformation of that name \(available: none\)$")


def check_option(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    """``--option`` sets a declared option of a selected extension (here tetris-random's seed, by name and
    qualified), report.json records it, and an option no selected extension declares is one line."""
    first, second = reports(outcomes[:2])
    assert [report["options"]["allocator"] for report in (first, second)] == [
        {"name": "tetris-random", "values": {"seed": seed, "tries": 1}} for seed in (1, 2)]
    offsets = [[buffer["offset"] for buffer in report["memory"]["buffers"]] for report in (first, second)]
    assert offsets[0] != offsets[1], "another seed, another order"
    if code := network_c(outcomes[:2]):
        assert code[0] != code[1]
    one_error(outcomes[2], r"^error: --option seed=1: no selected extension takes an option 'seed' \(the selected "
                           r"ones take: platform 'generic-c': no options; allocator 'first-fit': no options\); 'seed' "
                           r"is an option of allocator 'tetris-coopt' .*allocator 'tetris-random' \(select it with "
                           r"--allocator tetris-random\), which are not selected$")


def check_quiet(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    loud, quiet = reports(outcomes)
    assert "timings:" in outcomes[0].stderr and "timings:" not in outcomes[1].stderr
    assert quiet == loud


# -- checks of options that belong to one command ------------------------------------------------------------------


Check = Callable[[Workspace, str, list[CliOutcome]], None]
CFLAGS = ENVIRON["CFLAGS"]
"""For ``make`` in a compile's output folder, which runs with nothing but ``PATH`` in its environment."""


def check_inputs(workspace: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    reports(outcomes)
    for outcome, data in zip(outcomes, ("cnn_a.npz", "cnn_b.npz")):
        assert outcome.files["inputs.bin"] == workspace.arrays(data)[0].tobytes()
    assert outcomes[0].files["outputs.bin"] != outcomes[1].files["outputs.bin"]


def check_outputs(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    runtime, golden, wrong = outcomes
    reports([runtime, golden])
    assert "reference: ONNX Runtime" in runtime.stdout and "reference: golden" in golden.stdout
    assert wrong.exit_code == 1 and "MISMATCH" in wrong.stdout and "1/4" in wrong.stdout, wrong.describe()


def check_atol(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    strict, loose = outcomes
    assert strict.exit_code == 1 and "MISMATCH" in strict.stdout, strict.describe()
    reports([loose])


def check_rtol(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    absolute, relative = outcomes
    assert absolute.exit_code == 1 and "MISMATCH" in absolute.stdout, absolute.describe()
    reports([relative])


def check_lsb_tolerance(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    by_atol, one_step, half_step = outcomes
    assert by_atol.exit_code == 1 and "MISMATCH" in by_atol.stdout, by_atol.describe()
    reports([one_step])
    assert half_step.exit_code == 1 and "MISMATCH" in half_step.stdout, half_step.describe()


def check_repeats(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    reports(outcomes)
    assert "over 1 run(s)" in outcomes[0].stdout and "over 4 run(s)" in outcomes[1].stdout


def check_prefix(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    reports(outcomes[:2])
    plain, prefixed = (outcome.text("Network.h") or "" for outcome in outcomes[:2])
    for default, renamed in (("void InitNetwork(void);", "void kws_InitNetwork(void);"),
                             ("void RunNetwork(void);", "void kws_RunNetwork(void);"),
                             ("*DeeployNetwork_inputs[", "*kws_inputs["),
                             ("#define DEEPLOY_NETWORK_ARENA_BYTES ", "#define kws_ARENA_BYTES ")):
        assert default in plain and renamed not in plain and renamed in prefixed, renamed
    assert not re.search(r"\b(InitNetwork|RunNetwork|DeeployNetwork_\w+|DEEPLOY_NETWORK_\w+)\b", prefixed)
    # a float weight's symbol is its storage union (NAME__store; NAME is the float view), others are arrays
    weights = [re.findall(r"extern const (?:union )?\w+ (\w+?)(?:__store)?[\[;]",
                          outcome.text("Network_weights.h") or "") for outcome in outcomes[:2]]
    assert weights[0] and weights[1] == [f"kws_{name}" for name in weights[0]]
    one_error(outcomes[2], r"^error: --prefix '9x' is not a C identifier")


def check_arena(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    """The first two compiles carry --inputs: the self-test runs the network in its own arena and in a caller's."""
    reports(outcomes[:2])
    static, user = (outcome.text("Network.h") or "" for outcome in outcomes[:2])
    assert "void InitNetwork(void);" in static and "int InitNetwork(void *arena);" in user
    assert "ARENA_ALIGNMENT" not in static and re.search(r"#define DEEPLOY_NETWORK_ARENA_ALIGNMENT \d+\n", user)
    arena_array = re.compile(r"static union \w+ dc_arena;")
    code = network_c(outcomes[:2])
    assert code and arena_array.search(code[0]) and not arena_array.search(code[1])
    assert [self_test_passes(outcome, CFLAGS) for outcome in outcomes[:2]] == [True, True]
    one_error(outcomes[2], r"^error: --arena user: platform 'pulp-cluster' places the arena itself")


def check_weights_section(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    _, placed = reports(outcomes[:2])
    attribute = '__attribute__((section(".rodata.user_weights")))'
    assert [attribute in (outcome.text("Network_weights.c") or "") for outcome in outcomes[:2]] == [False, True]
    sections = [object_sections(outcome, "build/Network_weights.o", CFLAGS) for outcome in outcomes[:2]]
    assert ".rodata.user_weights" not in sections[0] and sections[1][".rodata.user_weights"] == placed["weight_bytes"]
    one_error(outcomes[2], r"^error: --weights-section 'rodata weights' is not a section name: .*"
                           r"\(e\.g\. --weights-section \.rodata\.weights\)$")


def check_arena_section(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    _, placed = reports(outcomes[:2])
    attribute = '__attribute__((section(".bss.user_arena")))'
    assert [attribute in (outcome.text("Network.c") or "") for outcome in outcomes[:2]] == [False, True]
    sections = [object_sections(outcome, "build/Network.o", CFLAGS) for outcome in outcomes[:2]]
    assert ".bss.user_arena" not in sections[0] and sections[1][".bss.user_arena"] == placed["memory"]["arena_bytes"]
    one_error(outcomes[2], r"^error: --arena-section 'bss arena' is not a section name: .*"
                           r"\(e\.g\. --arena-section \.bss\.arena\)$")


def check_compile_inputs(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    typed = reports(outcomes)
    assert [report["layers"][0]["inputs"][0]["dtype"] for report in typed] == ["float32", "int8", "uint8"]
    assert "input types from int8_stored.npz: x=int8" in outcomes[1].stderr
    assert [sorted(name for name in outcome.files if name.startswith("selftest/")) for outcome in outcomes] == [
        [], *[["selftest/dc_selftest_data.c", "selftest/dc_selftest_main.c"]] * 2]
    absent = make(outcomes[0], "test", cflags=CFLAGS)
    assert absent.returncode != 0 and "no self-test: compile with --inputs" in absent.stderr, absent.stderr
    assert self_test_passes(outcomes[1], CFLAGS) and self_test_passes(outcomes[2], CFLAGS)


def check_compile_outputs(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
    assert [self_test_passes(outcome, CFLAGS) for outcome in outcomes[:3]] == [True, True, False]
    one_error(outcomes[3], r"^error: --outputs needs --inputs")


def self_test_verdicts(*passing: bool) -> Check:
    """A check that ``make test`` passes (True) or reports a mismatch (False) in each run's output folder."""
    def check(_: Workspace, command: str, outcomes: list[CliOutcome]) -> None:
        assert [self_test_passes(outcome, CFLAGS) for outcome in outcomes] == list(passing)
    return check


# -- the effects tables --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variants:
    """``model`` run by the command under test once per argument list; ``check`` judges the runs together."""

    model: str
    variants: tuple[tuple[str, ...], ...]
    check: Check
    validate_extra: tuple[str, ...] = ()
    """Arguments added for ``validate`` only (e.g. integer input data for an integer network)."""
    reason: str = ""
    """Why this network or platform: where the option has no visible effect on the usual one."""

    def outcomes(self, workspace: Workspace, command: str) -> list[CliOutcome]:
        extra = self.validate_extra if command == "validate" else ()
        return [workspace.run(command, self.model, *args, *extra) for args in self.variants]

    def run(self, workspace: Workspace, command: str) -> None:
        self.check(workspace, command, self.outcomes(workspace, command))


@dataclass(frozen=True)
class Scenario:
    """An effect that needs more than runs of one model: output folders, plugin selection, printed text."""

    steps: Callable[[Workspace], None]

    def run(self, workspace: Workspace, command: str) -> None:
        self.steps(workspace)


Effect = Variants | Scenario

L1_SMALL = ("--l1", SMALL_L1)
CLUSTER = ("--platform", "pulp-cluster")
TYPE_REASON = ("validate gets integer data that fits both int8 and uint8 (--inputs): its default random data is "
             "float, which an integer input truncates (see test_validate_random_data_suits_integer_input_types)")

SHARED_EFFECTS: dict[str, Effect] = {
    "--platform": Variants("cnn", ((), CLUSTER), check_platform),
    "--memory-level": Variants(
        "cnn", (CLUSTER, (*CLUSTER, "--memory-level", "l2-l1")), check_memory_level,
        reason="the cluster always compiles with its own hierarchy, which the named level replaces (on generic-c "
             "the level turns tiling on: see test_memory_level_alone_turns_tiling_on)"),
    "--tiler": Variants("cnn", ((*L1_SMALL, "--tiler", SINGLE_BUFFERING), (*L1_SMALL, "--tiler", DOUBLE_BUFFERING)),
                        check_buffering_scheme),
    "--allocator": Variants("two_branch_mlp", ((), ("--allocator", "minimalloc")), check_allocator,
                            reason="first-fit already packs the catalogue networks to their lower bound"),
    "--input-shape": Variants("dynamic_conv", (("--input-shape", "x=1x2x8x8"), ("--input-shape", "x=2x2x4x6"), ()),
                              check_input_shape),
    "--input-type": Variants("integer_conv", (("--input-type", "x=int8"), ("--input-type", "x=uint8"),
                                              ("--input-type", "x=float32")), check_input_types,
                             validate_extra=("--inputs", "@small_ints.npz"), reason=TYPE_REASON),
    "--input-types-from": Variants("integer_conv", (("--input-types-from", "@int8.npz"),
                                                    ("--input-types-from", "@uint8.npz"),
                                                    ("--input-types-from", "@float.npz")), check_input_types,
                                   validate_extra=("--inputs", "@small_ints.npz"), reason=TYPE_REASON),
    "--memory-hierarchy": Variants("cnn", ((), ("--memory-hierarchy", "l2-l1"), ("--memory-hierarchy", "@levels.yaml")),
                                   check_memory_hierarchy),
    "--l1": Variants("cnn", (("--l1", "4000"), ("--l1", "64000")), check_l1),
    "--l2": Variants("cnn", (("--l1", "64000"), ("--l1", "64000", "--l2", "100000"), ("--l1", "64000", "--l2", "1000")),
                     check_l2),
    "--l3": Variants("cnn", (CLUSTER, (*CLUSTER, "--l3", "1000000"), ("--l3", "1000000")), check_l3,
                     reason="only the cluster has an L3; the catalogue CNN fits its L2, so nothing moves to L3 and the "
                          "size only reaches the emulated memory (plugins/pulp_cluster/tests/test_l3_options.py "
                          "shows tensors in L3 and an L3 too small); generic-c refuses it"),
    "--cores": Variants("cnn", ((*CLUSTER, "--cores", "2"), (*CLUSTER, "--cores", "8")), check_cores,
                        reason="generic-c has one core and refuses --cores (test_cli_compile checks the message)"),
    "--buffering": Variants("cnn", ((*L1_SMALL, "--buffering", "single"), (*L1_SMALL, "--buffering", "double")),
                            check_buffering_scheme),
    "--tiling-strategy": Variants("cnn", ((*L1_SMALL, "--fusion", "none"),
                                          (*L1_SMALL, "--tiling-strategy", "min", "--fusion", "none"),
                                          ("--tiling-strategy", "min")), check_tiling_strategy),
    "--fusion": Variants("cnn", ((*L1_SMALL, "--fusion", "none"), (*L1_SMALL, "--fusion", "auto"), ("--fusion", "auto")),
                         check_fusion),
    "--tiling-from": Variants("cnn", ((*L1_SMALL, "--fusion", "none"), (*L1_SMALL, "--tiling-from", "@min_tiling.json")),
                              check_tiling_from),
    "--quantization": Variants("qdq_conv", ((), ("--quantization", "fixed-point")), check_quantization),
    "--quiet": Variants("cnn", ((), ("--quiet",)), check_quiet),
    "--option": Variants(
        "two_branch_mlp", (("--allocator", "tetris-random", "--option", "tries=1", "--option", "seed=1"),
                           ("--allocator", "tetris-random", "--option", "tries=1", "--option", "allocator.seed=2"),
                           ("--option", "seed=1")), check_option,
        reason="an allocator's seed moves buffers on a network whose buffers can be ordered several ways; the bundled "
             "allocators declare options (tests/test_installed_plugins.py shows a third-party plugin's option)"),
    "--code-transformation": Variants(
        "cnn", ((), ("--code-transformation", "dc-not-installed")), check_code_transformation,
        reason="no bundled plugin registers a code transformation, so here a name is refused in one line; "
             "tests/test_installed_plugins.py installs one and shows it runs, in the order named, only when named"),
}
"""Options of every compiling command, checked on each of them."""


def compile_output(workspace: Workspace) -> None:
    nested = workspace.root / "output" / "nested" / "out"
    beside = workspace.root / "output" / "beside"
    first = workspace.invoke("compile", str(workspace.models["cnn"]), "-o", str(nested))
    second = workspace.invoke("compile", str(workspace.models["cnn"]), "--output", str(beside))
    assert first.ok and second.ok, first.describe() + second.describe()
    for outcome, folder in ((first, nested), (second, beside)):
        listed = [Path(line.split()[0]) for line in outcome.stdout.splitlines()[1:] if line.strip()]
        assert listed and all(path.parent == folder for path in listed), outcome.stdout
        assert {path.name for path in listed} == {path.name for path in folder.iterdir()}
    for name in ("Network.c", "Network.h", "Network_weights.c", "Network_weights.h", "report.json"):
        assert (nested / name).read_bytes() == (beside / name).read_bytes(), name
    assert sorted(path.name for path in (workspace.root / "output").iterdir()) == ["beside", "nested"]


def compile_force(workspace: Workspace) -> None:
    folder = workspace.root / "force"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep me", encoding="utf-8")
    refused = workspace.invoke("compile", str(workspace.models["cnn"]), "-o", str(folder))
    one_error(refused, r"is not empty; use --force")
    assert [path.name for path in folder.iterdir()] == ["mine.txt"]
    forced = workspace.invoke("compile", str(workspace.models["cnn"]), "-o", str(folder), "--force")
    assert forced.ok, forced.describe()
    assert not (folder / "mine.txt").exists() and (folder / "Network.c").is_file()


def compile_dump_state(workspace: Workspace) -> None:
    plain, dumped = workspace.root / "state_plain", workspace.root / "state_dumped"
    for folder, extra in ((plain, ()), (dumped, ("--dump-state",))):
        outcome = workspace.invoke("compile", str(workspace.models["cnn"]), "-o", str(folder), *extra)
        assert outcome.ok, outcome.describe()
    assert not (plain / "state").exists()
    stages = sorted(path.name for path in (dumped / "state").iterdir())
    assert stages == ["1-frontend", "2-lower", "3-parse", "4-bind", "5-generate"]
    assert all((dumped / "state" / stage / "state.json").is_file() for stage in stages)
    assert (plain / "Network.c").read_bytes() == (dumped / "Network.c").read_bytes()


def compile_plot(workspace: Workspace) -> None:
    plain = workspace.run("compile", "cnn")
    untiled = workspace.run("compile", "cnn", "--plot")
    tiled = workspace.run("compile", "cnn", *L1_SMALL, "--plot")
    assert plain.ok and untiled.ok and tiled.ok
    assert not [name for name in plain.files if name.startswith("memory")]
    assert sorted(name for name in untiled.files if name.startswith("memory")) == ["memory.html", "memory_arena.svg"]
    assert sorted(name for name in tiled.files if name.startswith("memory")) == [
        "memory.html", "memory_L1.svg", "memory_L2.svg"]


def validate_build_dir(workspace: Workspace) -> None:
    kept = workspace.root / "kept_build"
    scratch = workspace.root / "cwd"
    scratch.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(scratch)
        temporary = workspace.invoke("validate", str(workspace.models["cnn"]))
        keeping = workspace.invoke("validate", str(workspace.models["cnn"]), "--build-dir", str(kept))
    assert temporary.ok and keeping.ok, temporary.describe() + keeping.describe()
    assert list(scratch.iterdir()) == [], "a build without --build-dir leaves nothing behind"
    assert {"Network.c", "report.json", "inputs.bin", "outputs.bin", "network"} <= {p.name for p in kept.iterdir()}


def validate_profile(workspace: Workspace) -> None:
    """The per-layer table and the page appear only with --profile; the page goes where --profile-html says."""
    scratch = workspace.root / "profile_cwd"
    scratch.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(scratch)
        plain = workspace.invoke("validate", str(workspace.models["cnn"]))
        profiled = workspace.invoke("validate", str(workspace.models["cnn"]), "--profile")
    assert plain.ok and profiled.ok, plain.describe() + profiled.describe()
    assert "per-layer time of" not in plain.stdout and "per-layer time of" in profiled.stdout
    assert [path.name for path in scratch.iterdir()] == ["profile.html"]
    compiled = workspace.run("compile", "cnn")
    for layer in compiled.report["layers"]:  # type: ignore[index]
        assert layer["node"] in profiled.stdout and layer["node"] in (scratch / "profile.html").read_text()


def validate_profile_html(workspace: Workspace) -> None:
    page = workspace.root / "pages" / "cnn-profile.html"
    done = workspace.invoke("validate", str(workspace.models["cnn"]), "--profile", "--profile-html", str(page))
    assert done.ok and page.is_file() and f"wrote {page}" in done.stdout, done.describe()
    foreign = workspace.root / "pages" / "notes.html"
    foreign.write_text("mine")
    refused = workspace.invoke("validate", str(workspace.models["cnn"]), "--profile", "--profile-html", str(foreign))
    assert not refused.ok and foreign.read_text() == "mine"


def analyze_json(workspace: Workspace) -> None:
    table = workspace.invoke("analyze", str(workspace.models["cnn"]))
    printed = workspace.run("analyze", "cnn")
    compiled = workspace.run("compile", "cnn")
    assert table.ok and printed.ok and compiled.ok
    assert printed.report == json.loads(compiled.files["report.json"])
    with pytest.raises(json.JSONDecodeError):
        json.loads(table.stdout)
    for layer in printed.report["layers"]:  # type: ignore[index]
        assert layer["node"] in table.stdout
    assert "allocator first-fit" in table.stdout and "allocator first-fit" not in printed.stdout


def supported_ops_json(outcome: CliOutcome) -> object:
    assert outcome.exit_code in (0, 2) and not outcome.error_lines, outcome.describe()
    return json.loads(outcome.stdout)


def node_kernels(outcome: CliOutcome, platform: str) -> dict[str, str]:
    """node -> kernel (``""`` when unsupported) of a ``supported-ops --model --json`` run."""
    report = supported_ops_json(outcome)
    assert isinstance(report, dict)
    return {node["name"]: node["platforms"][platform]["kernel"] for node in report["nodes"]}


def supported_ops_platform(workspace: Workspace) -> None:
    listed = {platform: workspace.invoke("supported-ops", "--platform", platform)
              for platform in ("generic-c", "pulp-cluster")}
    for platform, outcome in listed.items():
        assert outcome.ok and outcome.stdout.startswith(f"operators on {platform}\n"), outcome.describe()
    model = str(workspace.models["cnn"])
    every = supported_ops_json(workspace.invoke("supported-ops", "--model", model, "--json"))
    one = supported_ops_json(workspace.invoke("supported-ops", "--model", model, "--platform", "pulp-cluster",
                                              "--json"))
    assert isinstance(every, dict) and isinstance(one, dict)
    assert every["platforms"] == ["generic-c", "pulp-cluster"] and one["platforms"] == ["pulp-cluster"]


def supported_ops_model(workspace: Workspace) -> None:
    from onnx import TensorProto, helper

    listing = workspace.invoke("supported-ops", "--json")
    assert listing.ok and isinstance(supported_ops_json(listing), list)
    supported = workspace.invoke("supported-ops", "--model", str(workspace.models["cnn"]))
    assert supported.ok and supported.stdout.startswith("nodes of cnn.onnx on generic-c, pulp-cluster"), \
        supported.describe()
    det = workspace.root / "det.onnx"
    graph = helper.make_graph([helper.make_node("Det", ["x"], ["y"], name="det")], "det",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), det)
    refused = workspace.invoke("supported-ops", "--model", str(det))
    assert refused.exit_code == 2 and "no mapper for op Det on generic-c" in refused.stdout, refused.describe()


def supported_ops_input_shape(workspace: Workspace) -> None:
    model = str(workspace.models["dynamic_conv"])
    dynamic = workspace.invoke("supported-ops", "--model", model, "--platform", "generic-c", "--json")
    fixed = workspace.invoke("supported-ops", "--model", model, "--platform", "generic-c", "--input-shape",
                             "x=1x2x8x8", "--json")
    assert dynamic.exit_code == 2 and fixed.ok, fixed.describe()
    assert set(node_kernels(dynamic, "generic-c").values()) == {""}
    assert node_kernels(fixed, "generic-c")["conv"].startswith("Conv float32")


def supported_ops_input_type(workspace: Workspace) -> None:
    model = str(workspace.models["integer_conv"])
    as_declared = workspace.invoke("supported-ops", "--model", model, "--platform", "generic-c", "--json")
    as_int8 = workspace.invoke("supported-ops", "--model", model, "--platform", "generic-c", "--input-type",
                               "x=int8", "--json")
    assert list(node_kernels(as_declared, "generic-c").values())[0].startswith("Conv float32")
    assert list(node_kernels(as_int8, "generic-c").values())[0].startswith("Conv integer")


def supported_ops_input_types_from(workspace: Workspace) -> None:
    model = str(workspace.models["integer_conv"])
    kernels_by_sample = [list(node_kernels(workspace.invoke("supported-ops", "--model", model, "--platform",
                                                            "generic-c", "--input-types-from",
                                                            str(workspace.file(sample)), "--json"),
                                           "generic-c").values())[0]
                         for sample in ("int8.npz", "float.npz")]
    assert kernels_by_sample[0].startswith("Conv integer") and kernels_by_sample[1].startswith("Conv float32")


def supported_ops_as_json(workspace: Workspace) -> None:
    text = workspace.invoke("supported-ops")
    rows = supported_ops_json(workspace.invoke("supported-ops", "--json"))
    assert text.ok and isinstance(rows, list) and rows
    with pytest.raises(json.JSONDecodeError):
        json.loads(text.stdout)
    assert len(text.stdout.splitlines()) == len({row["op"] for row in rows}) + 3, "title, header, rule, a line per op"


def validate_reference(workspace: Workspace) -> None:
    """LiteRT on the named .tflite is the reference (needs the quant extra: TensorFlow converts a Keras MLP)."""
    import importlib.util

    absent = [name for name in ("tensorflow", "tf2onnx", "ai_edge_litert") if importlib.util.find_spec(name) is None]
    if absent:
        pytest.skip(f"{', '.join(absent)} not installed: --reference MODEL.tflite needs the 'quant' extra (make quant)")
    from tests.support.litert_reference_effect import check_reference_effect

    scratch = workspace.root / "reference"
    scratch.mkdir(exist_ok=True)
    check_reference_effect(lambda args: workspace.invoke(*args), scratch)


OWN_EFFECTS: dict[tuple[str, str], Effect] = {
    ("validate", "--reference"): Scenario(validate_reference),
    ("supported-ops", "--platform"): Scenario(supported_ops_platform),
    ("supported-ops", "--model"): Scenario(supported_ops_model),
    ("supported-ops", "--input-shape"): Scenario(supported_ops_input_shape),
    ("supported-ops", "--input-type"): Scenario(supported_ops_input_type),
    ("supported-ops", "--input-types-from"): Scenario(supported_ops_input_types_from),
    ("supported-ops", "--json"): Scenario(supported_ops_as_json),
    ("compile", "--output"): Scenario(compile_output),
    ("compile", "--force"): Scenario(compile_force),
    ("compile", "--dump-state"): Scenario(compile_dump_state),
    ("compile", "--plot"): Scenario(compile_plot),
    ("validate", "--inputs"): Variants("cnn", (("--inputs", "@cnn_a.npz"), ("--inputs", "@cnn_b.npz")), check_inputs),
    ("validate", "--outputs"): Variants("cnn", (("--inputs", "@cnn_a.npz"),
                                                ("--inputs", "@cnn_a.npz", "--outputs", "@golden.npz"),
                                                ("--inputs", "@cnn_a.npz", "--outputs", "@golden_wrong.npz")),
                                        check_outputs),
    ("validate", "--atol"): Variants("cnn", (("--inputs", "@cnn_a.npz", "--outputs", "@golden_near.npz"),
                                             ("--inputs", "@cnn_a.npz", "--outputs", "@golden_near.npz",
                                              "--atol", "0.1")), check_atol),
    ("validate", "--rtol"): Variants("cnn", (("--inputs", "@cnn_a.npz", "--outputs", "@golden_scaled.npz",
                                              "--atol", "0"),
                                             ("--inputs", "@cnn_a.npz", "--outputs", "@golden_scaled.npz",
                                              "--atol", "0", "--rtol", "0.05")), check_rtol),
    ("validate", "--lsb-tolerance"): Variants(
        "qdq_conv", tuple(("--inputs", "@qdq_inputs.npz", "--outputs", "@qdq_golden_one_step.npz", *extra)
                          for extra in ((), ("--lsb-tolerance", "1"), ("--lsb-tolerance", "0.5"))),
        check_lsb_tolerance),
    ("validate", "--repeats"): Variants("cnn", (("--repeats", "1"), ("--repeats", "4")), check_repeats,
                                        reason="all runs must agree, which a deterministic network always does: "
                                             "what changes is the count the best time is taken over"),
    ("validate", "--build-dir"): Scenario(validate_build_dir),
    ("validate", "--profile"): Scenario(validate_profile),
    ("validate", "--profile-html"): Scenario(validate_profile_html),
    ("compile", "--prefix"): Variants("cnn", ((), ("--prefix", "kws"), ("--prefix", "9x")), check_prefix),
    ("compile", "--arena"): Variants("cnn", (("--inputs", "@cnn_a.npz"), ("--arena", "user", "--inputs", "@cnn_a.npz"),
                                             ("--arena", "user", *CLUSTER)), check_arena),
    ("compile", "--weights-section"): Variants(
        "cnn", ((), ("--weights-section", ".rodata.user_weights"), ("--weights-section", "rodata weights")),
        check_weights_section),
    ("compile", "--arena-section"): Variants(
        "cnn", ((), ("--arena-section", ".bss.user_arena"), ("--arena-section", "bss arena")), check_arena_section),
    ("compile", "--inputs"): Variants(
        "integer_conv", ((), ("--inputs", "@int8_stored.npz"), ("--inputs", "@uint8_stored.npz")),
        check_compile_inputs,
        reason="integer data stored as integers types an integer network's inputs as validate --inputs does "
             "(whole numbers stored as floats try the declared float type first)"),
    ("compile", "--outputs"): Variants("cnn", (("--inputs", "@cnn_a.npz"),
                                               ("--inputs", "@cnn_a.npz", "--outputs", "@golden.npz"),
                                               ("--inputs", "@cnn_a.npz", "--outputs", "@golden_wrong.npz"),
                                               ("--outputs", "@golden.npz")), check_compile_outputs),
    ("compile", "--atol"): Variants("cnn", (("--inputs", "@cnn_a.npz", "--outputs", "@golden_near.npz"),
                                            ("--inputs", "@cnn_a.npz", "--outputs", "@golden_near.npz",
                                             "--atol", "0.1")), self_test_verdicts(False, True)),
    ("compile", "--rtol"): Variants("cnn", (("--inputs", "@cnn_a.npz", "--outputs", "@golden_scaled.npz",
                                             "--atol", "0"),
                                            ("--inputs", "@cnn_a.npz", "--outputs", "@golden_scaled.npz",
                                             "--atol", "0", "--rtol", "0.05")), self_test_verdicts(False, True)),
    ("compile", "--lsb-tolerance"): Variants(
        "qdq_conv", tuple(("--inputs", "@qdq_inputs.npz", "--outputs", "@qdq_golden_one_step.npz", *extra)
                          for extra in ((), ("--lsb-tolerance", "1"), ("--lsb-tolerance", "0.5"),
                                        ("--quantization", "fixed-point"))),
        self_test_verdicts(False, True, False, True),
        reason="the last run shows the default of 1 step with --quantization fixed-point"),
    ("analyze", "--json"): Scenario(analyze_json),
}
"""Options of one command."""


def group_version(workspace: Workspace) -> None:
    out = workspace.root / "version_out"
    shown = workspace.invoke("--version", "compile", str(workspace.models["cnn"]), "-o", str(out))
    assert shown.ok and shown.stdout.strip().endswith(f"version {version('deeploy-core')}"), shown.describe()
    assert not out.exists(), "--version prints and stops before the command"
    assert workspace.invoke("compile", str(workspace.models["cnn"]), "-o", str(out)).ok and out.is_dir()


def group_no_plugins(workspace: Workspace) -> None:
    loaded = workspace.root / "no_plugins_loaded"
    refused = workspace.root / "no_plugins_refused"
    assert workspace.invoke("compile", str(workspace.models["cnn"]), "-o", str(loaded), plugins="generic-c").ok
    outcome = workspace.invoke("--no-plugins", "compile", str(workspace.models["cnn"]), "-o", str(refused),
                               plugins="generic-c")
    one_error(outcome, r"no platform named 'generic-c'")
    assert not refused.exists()


def group_disable_plugin(workspace: Workspace) -> None:
    model = str(workspace.models["two_branch_mlp"])
    with_it = workspace.invoke("analyze", model, "--allocator", "minimalloc", "--json")
    other_disabled = workspace.invoke("--disable-plugin", "tetris", "analyze", model, "--allocator", "minimalloc",
                                      "--json")
    assert with_it.ok and other_disabled.ok and with_it.stdout == other_disabled.stdout
    without = workspace.invoke("--disable-plugin", "minimalloc", "analyze", model, "--allocator", "minimalloc")
    one_error(without, r"no allocator named 'minimalloc'")
    assert "minimalloc" not in without.error_lines[0].split("available:")[1]


def group_trace_plugins(workspace: Workspace) -> None:
    model = str(workspace.models["cnn"])
    quiet = workspace.invoke("analyze", model, "--json")
    traced = workspace.invoke("--trace-plugins", "analyze", model, "--json")
    assert quiet.ok and traced.ok and quiet.stdout == traced.stdout
    assert "loading plugin" not in quiet.stderr
    for plugin in PLUGINS.split(","):
        assert f"loading plugin {plugin} " in traced.stderr, traced.stderr
    assert "register_platforms" in traced.stderr


GROUP_EFFECTS: dict[str, Effect] = {
    "--version": Scenario(group_version),
    "--no-plugins": Scenario(group_no_plugins),
    "--disable-plugin": Scenario(group_disable_plugin),
    "--trace-plugins": Scenario(group_trace_plugins),
}
"""The command group's own options."""


def effect_of(command: str, option: str) -> Effect | None:
    if command == GROUP:
        return GROUP_EFFECTS.get(option)
    return OWN_EFFECTS.get((command, option)) or SHARED_EFFECTS.get(option)


# -- the tests -----------------------------------------------------------------------------------------------------


OPTIONS = enumerated_options()


@pytest.mark.parametrize(("command", "option"), OPTIONS,
                         ids=[f"{command}:{option_name(option)}" for command, option in OPTIONS])
def test_option_has_the_documented_effect(command: str, option: click.Option, workspace: Workspace) -> None:
    name = option_name(option)
    effect = effect_of(command, name)
    if effect is None:
        pytest.fail(f"{command} {name} has no entry in the effects tables of {Path(__file__).name}: add one that "
                    f"shows what its help says ({option.help!r})")
    effect.run(workspace, command)


def test_the_tables_name_only_existing_options() -> None:
    """A removed or renamed option leaves no entry behind; shared entries are shared by every compiling command."""
    present: dict[str, set[str]] = {}
    for command, option in OPTIONS:
        present.setdefault(command, set()).add(option_name(option))
    assert set(GROUP_EFFECTS) <= present[GROUP], set(GROUP_EFFECTS) - present[GROUP]
    stale = [(command, name) for command, name in OWN_EFFECTS if name not in present.get(command, set())]
    assert not stale
    unshared = [name for name in SHARED_EFFECTS if any(name not in present[command] for command in COMPILING_COMMANDS)]
    assert not unshared, "shared entries must name options of compile, validate and analyze alike"


VARIANT_CASES = [(command, option_name(option)) for command, option in OPTIONS
                 if isinstance(effect_of(command, option_name(option)), Variants)]


@pytest.mark.parametrize(("command", "option"), VARIANT_CASES, ids=[f"{c}:{o}" for c, o in VARIANT_CASES])
def test_the_check_fails_when_the_option_changes_nothing(command: str, option: str, workspace: Workspace) -> None:
    """Each check would notice an option that is ignored: given the first run's outcome for every value, it fails.

    This keeps the table honest: a check that passes whatever happens proves nothing.
    """
    effect = effect_of(command, option)
    assert isinstance(effect, Variants)
    first = effect.outcomes(workspace, command)[0]
    with pytest.raises((AssertionError, KeyError)):  # KeyError: the report lacks what the option adds
        effect.check(workspace, command, [first] * len(effect.variants))


def test_validate_random_data_suits_integer_input_types(workspace: Workspace) -> None:
    """Without --inputs, validate makes seeded random data; for an integer input it must be integer data."""
    outcome = workspace.run("validate", "integer_conv", "--input-type", "x=int8")
    assert outcome.ok, outcome.describe()


def test_cluster_runtime_gets_the_l1_of_a_hierarchy_file(workspace: Workspace) -> None:
    outcome = workspace.run("validate", "dynamic_conv", "--input-shape", "x=1x2x64x64", *CLUSTER,
                            "--memory-hierarchy", "@large_l1.yaml")
    assert outcome.ok, outcome.describe()
    assert outcome.report["cluster"]["level_sizes"]["L1"] == outcome.report["memory_levels"]["L1"]["capacity"]


def test_memory_level_alone_turns_tiling_on(workspace: Workspace) -> None:
    """On generic-c, naming a memory level tiles with it (as --memory-hierarchy NAME does); before, it was ignored."""
    plain, levelled = (workspace.run("compile", "cnn", *extra) for extra in ((), ("--memory-level", "l2-l1")))
    assert plain.ok and levelled.ok, levelled.describe()
    assert "tiling" not in plain.report and levelled.report["tiling"]["tiler"] == SINGLE_BUFFERING
    assert capacities(levelled.report) == BUILTIN_LEVELS
