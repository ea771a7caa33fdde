"""The differential build matrix (issue 29): one generated folder, many compilers and levels, the same outputs.

Issue 29's network (repeated identical RequantShift/Add blocks) computed
wrong answers at gcc 12 ``-O2`` only: gcc folded the identical layer
functions and a gcc bug then deleted their calls.  A test that validates one
build cannot see that; these tests build the same folder with gcc
(-O0/-O1/-O2/-O3/-Os), clang (-O0/-O2/-O3/-Oz), each with and without
``-fno-strict-aliasing``, and with arm-none-eabi-gcc (Cortex-M4) and
riscv64-unknown-elf-gcc (rv32imc) run in QEMU, and require every build to
compute what the host ``gcc -O0`` build computes (integers bit for bit, floats
within 1e-6 of the output's max |value|) and the goldens.

The default run is a slice that takes a few minutes on two cores: issue 29's
network at every level of every compiler, a few builds of each other network
kind, and the full-size integer CCT blocks at gcc -O2 and through their
folder's own ``make test`` (default flags and ``CFLAGS=-O2``).  The whole
matrix (every network kind × every build) is marked ``build_matrix`` and runs
with ``pytest -m build_matrix tests/test_build_matrix.py`` (or
``bench/build_matrix.py``, which prints the table).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from deeploy_core.codegen.generated_network import TensorSpec
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.build_matrix import (
    BASELINE,
    BUILD_FAILED,
    DIFFERS,
    FULL_MATRIX,
    GCC,
    IDENTICAL,
    RUN_FAILED,
    UNAVAILABLE,
    BuildConfig,
    BuildRun,
    Cell,
    build_and_run,
    judge,
    judge_all,
    mirror_folder,
    run_builds,
)
from deeploy_core.testing.output_dump import DumpError, dump_main_source, parse_dump
from deeploy_core.testing.output_equality import FLOAT_RELATIVE, Golden, build_differences
from tests.build_matrix_cases import FOLD, PEER_MISSING, CompiledCase, MatrixCase, all_cases, compile_case, matrix_host
from tests.support.matrix_table import problem_list, summary_table

CASES: dict[str, MatrixCase] = {case.name: case for case in all_cases()}
BUILDS: dict[str, BuildConfig] = {config.label: config for config in FULL_MATRIX}


def builds(*labels: str) -> tuple[BuildConfig, ...]:
    """Builds by label (``gcc -O2 (host)``); a typo fails at collection."""
    return tuple(BUILDS[label] for label in labels)


SLICE: dict[str, tuple[BuildConfig, ...]] = {
    # Issue 29's network at every level of every compiler, with and without -fno-strict-aliasing.
    FOLD: FULL_MATRIX,
    "repeated/requant_residual_x3": builds("gcc -O2 (host)", "gcc -O3 (host)", "clang -O3 (host)",
                                           "arm-none-eabi-gcc -O2 (cortex-m4)", "riscv64-unknown-elf-gcc -Os (rv32imc)"),
    "repeated/int8_elementwise_x3": builds("gcc -O2 -fno-strict-aliasing (host)", "clang -O2 (host)",
                                           "arm-none-eabi-gcc -Os (cortex-m4)"),
    "repeated/float_conv_x3": builds("gcc -O3 (host)", "clang -Oz (host)", "arm-none-eabi-gcc -O2 (cortex-m4)",
                                     "riscv64-unknown-elf-gcc -O2 (rv32imc)"),
    "cct/ITAMax": builds("gcc -O2 (host)"),
    "cct/ITAPartialMax": builds("gcc -O2 (host)"),
    "fuzz/float/0": builds("gcc -O3 (host)", "clang -O2 (host)"),
    "fuzz/qdq/1": builds("gcc -Os (host)", "arm-none-eabi-gcc -Os (cortex-m4)"),
    "fuzz/qdq-fixed/0": builds("gcc -O2 (host)", "clang -Oz (host)"),
    "peer/Models/miniMobileNet": builds("gcc -Os (host)", "clang -O3 (host)", "arm-none-eabi-gcc -Os (cortex-m4)"),
    "peer/Kernels/FP32/Softmax/Regular": builds("gcc -O3 (host)", "arm-none-eabi-gcc -Os (cortex-m4)"),
    "peer-tiled/Kernels/Integer/Conv/Regular_2D_RQ": builds("gcc -O2 (host)", "riscv64-unknown-elf-gcc -O2 (rv32imc)"),
}
"""The builds of each network that every run checks; the CCT blocks (integer, with an exact numpy golden) skip the
gcc -O0 baseline, every other network is also built by it."""
WITHOUT_BASELINE = ("cct/",)


def slice_builds(name: str) -> tuple[BuildConfig, ...]:
    chosen = SLICE[name]
    if name.startswith(WITHOUT_BASELINE) or BASELINE in chosen:
        return chosen
    return (BASELINE, *chosen)


class Matrix:
    """Compiles each network once and runs a network's builds together (two at a time) on first request."""

    def __init__(self, workdir: Path, host: PluginHost) -> None:
        self.workdir = workdir
        self.host = host
        self._compiled: dict[str, CompiledCase] = {}
        self._cells: dict[tuple[str, tuple[BuildConfig, ...]], dict[BuildConfig, Cell]] = {}

    def compiled(self, name: str) -> CompiledCase:
        if name not in self._compiled:
            case = CASES.get(name)
            if case is None:
                pytest.skip(PEER_MISSING if name.startswith("peer") else f"no network {name}")
            self._compiled[name] = compile_case(case, self.host, self.workdir / name.replace("/", "_"))
        return self._compiled[name]

    def cells(self, name: str, configs: tuple[BuildConfig, ...]) -> dict[BuildConfig, Cell]:
        key = (name, configs)
        if key not in self._cells:
            compiled = self.compiled(name)
            runs = run_builds(compiled.folder, configs, compiled.inputs, compiled.folder.parent / "builds",
                              compiled.api, jobs=2)
            self._cells[key] = {cell.config: cell for cell in judge_all(runs, compiled.specs, compiled.golden)}
        return self._cells[key]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    return Matrix(tmp_path_factory.mktemp("build-matrix"), matrix_host())


def _check(cell: Cell) -> None:
    if cell.status == UNAVAILABLE:
        pytest.skip(cell.detail)
    if cell.status != IDENTICAL:
        pytest.fail(f"{cell.config.label}: {cell.status}: {cell.detail}")


SLICE_CELLS = [(name, config) for name in SLICE for config in slice_builds(name)]


@pytest.mark.parametrize(("network", "config"), SLICE_CELLS,
                         ids=[f"{name}-{config.slug}" for name, config in SLICE_CELLS])
def test_build_computes_what_gcc_O0_and_the_golden_compute(network: str, config: BuildConfig,
                                                            matrix: Matrix) -> None:
    _check(matrix.cells(network, slice_builds(network))[config])


def test_the_slice_covers_every_compiler_and_level() -> None:
    covered = {config for configs in SLICE.values() for config in configs}
    assert set(FULL_MATRIX) <= covered
    assert SLICE[FOLD] == FULL_MATRIX
    assert {case.kind for case in CASES.values() if case.name in SLICE} >= {
        "repeated int8", "repeated float", "cct", "fuzz float", "fuzz qdq", "fuzz qdq-fixed"}


@pytest.mark.parametrize("softmax", ["ITAMax", "ITAPartialMax"])
@pytest.mark.parametrize("cflags", [None, "-O2"], ids=["default-flags", "CFLAGS=-O2"])
def test_full_size_cct_block_passes_its_self_test(softmax: str, cflags: str | None, matrix: Matrix,
                                                  tmp_path: Path) -> None:
    # The folder's own `make test` (what a user runs), at the Makefile's default flags and at an explicit -O2.
    work = mirror_folder(matrix.compiled(f"cct/{softmax}").folder, tmp_path / "out")
    command = ["make", "-s", "--no-print-directory", "-C", str(work), "test", *([f"CFLAGS={cflags}"] if cflags else [])]
    environment = {name: value for name, value in os.environ.items() if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=600)
    assert result.returncode == 0 and "self-test passed" in result.stdout, result.stdout + result.stderr


@pytest.mark.build_matrix
@pytest.mark.parametrize("network", list(CASES))
def test_whole_matrix(network: str, matrix: Matrix) -> None:
    """Every build of the matrix on ``network`` (``-m build_matrix``)."""
    cells = matrix.cells(network, FULL_MATRIX)
    failing = [cell for cell in cells.values() if cell.status not in (IDENTICAL, UNAVAILABLE)]
    assert not failing, "\n" + problem_list({network: failing})


# -- the machinery, on its own ----------------------------------------------------------------------------------------

FAKE_HEADER = """#include <stdint.h>
#define DEEPLOY_NETWORK_NUM_INPUTS 2
#define DEEPLOY_NETWORK_NUM_OUTPUTS 2
extern void *DeeployNetwork_inputs[2];
extern const uint32_t DeeployNetwork_inputs_bytes[2];
extern void *DeeployNetwork_outputs[2];
extern const uint32_t DeeployNetwork_outputs_bytes[2];
void InitNetwork(void);
void RunNetwork(void);
"""
FAKE_NETWORK = """#include "Network.h"
static unsigned char a[5], b[40], x[33], y[1];
void *DeeployNetwork_inputs[2] = {a, b};
const uint32_t DeeployNetwork_inputs_bytes[2] = {5, 40};
void *DeeployNetwork_outputs[2] = {x, y};
const uint32_t DeeployNetwork_outputs_bytes[2] = {33, 1};
void InitNetwork(void) {}
void RunNetwork(void) {
    int i;
    for (i = 0; i < 33; ++i) x[i] = (unsigned char)(b[i] ^ a[i % 5]);
    y[0] = (unsigned char)(a[0] + b[39]);
}
"""


def test_the_dump_main_prints_every_output_byte(tmp_path: Path) -> None:
    # A stand-in network (two inputs, outputs of 33 bytes and 1 byte: a partial last line, a single byte).
    (tmp_path / "Network.h").write_text(FAKE_HEADER)
    (tmp_path / "Network.c").write_text(FAKE_NETWORK)
    a, b = bytes([0, 1, 0x7F, 0x80, 0xFF]), bytes(range(200, 240))
    (tmp_path / "main.c").write_text(dump_main_source([a, b]))
    program = tmp_path / "program"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", str(tmp_path),
                    str(tmp_path / "main.c"), str(tmp_path / "Network.c"), "-o", str(program)], check=True)
    printed = subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout
    expected = (bytes(b[i] ^ a[i % 5] for i in range(33)), bytes([(a[0] + b[39]) % 256]))
    assert tuple(parse_dump("QEMU banner\n" + printed)) == expected


def test_an_incomplete_dump_is_refused() -> None:
    whole = "dc-output 0 3\n0102ff\ndc-output 1 1\n7f\ndc-end\n"
    assert parse_dump(whole) == [b"\x01\x02\xff", b"\x7f"]
    for broken in (whole.replace("dc-end\n", ""), whole.replace("0102ff", "0102"), whole.replace("7f", "zz"),
                   whole.replace("dc-output 1", "dc-output 2")):
        with pytest.raises(DumpError):
            parse_dump(broken)


def test_builds_agree_bit_for_bit_on_integers_and_within_1e_6_on_floats() -> None:
    ints = [TensorSpec("q", "int8", (4,))]
    same = np.array([1, -2, 3, 127], np.int8).tobytes()
    assert build_differences([same], [same], ints) == []
    flipped = np.array([1, -2, 3, 126], np.int8).tobytes()
    assert build_differences([flipped], [same], ints) == ["q: 1/4 elements differ (first at 3: 126 vs 127)"]
    floats = [TensorSpec("f", "float32", (3,))]
    base = np.array([1000.0, -2.0, np.nan], np.float32)
    close = base + np.array([1000.0 * FLOAT_RELATIVE * 0.5, 0.0, 0.0], np.float32)
    far = base + np.array([0.0, 1000.0 * FLOAT_RELATIVE * 4, 0.0], np.float32)
    assert build_differences([close.tobytes()], [base.tobytes()], floats) == []
    assert build_differences([far.tobytes()], [base.tobytes()], floats)[0].startswith("f: max |difference|")
    one_nan = np.array([1000.0, np.nan, np.nan], np.float32)
    assert build_differences([one_nan.tobytes()], [base.tobytes()], floats)


def test_verdicts_name_what_went_wrong() -> None:
    specs = [TensorSpec("y", "int8", (2,))]
    right, wrong = np.array([1, 2], np.int8), np.array([1, 3], np.int8)
    golden = Golden((right,))
    baseline = BuildRun(BASELINE, (right.tobytes(),))
    other = BuildConfig(GCC, "-O2")
    assert judge(BuildRun(other, (right.tobytes(),)), baseline, specs, golden).status == IDENTICAL
    differs = judge(BuildRun(other, (wrong.tobytes(),)), baseline, specs, golden)
    assert differs.status == DIFFERS and "vs gcc -O0 (host)" in differs.detail and "vs golden" in differs.detail
    assert judge(BuildRun(other, None, BUILD_FAILED, "cc1: error"), baseline, specs, golden).status == BUILD_FAILED
    assert judge(BuildRun(other, (b"\x01",)), baseline, specs, golden).status == RUN_FAILED
    # A baseline that is itself off the golden is reported against the golden only.
    assert "vs golden" in judge(BuildRun(BASELINE, (wrong.tobytes(),)), baseline, specs, golden).detail
    table = summary_table({"n": [differs]}, {"n": "kind"})
    assert "| gcc | `-O2` | host | 0/1 (1 differs) |" in table


def test_a_changed_constant_is_caught_and_failures_are_told_apart(matrix: Matrix, tmp_path: Path) -> None:
    # The fold network with one multiplier changed in the generated C must differ from the real baseline, at any
    # level; a flag the compiler refuses is a failed build, a program that does not finish in time a failed run.
    compiled = matrix.compiled(FOLD)
    tampered = mirror_folder(compiled.folder, tmp_path / "tampered")
    literal = re.compile(r"(?<!\w)5949(?!\w)")  # the multiplier's value, not a name holding the digits
    holder = next(path for path in sorted(tampered.rglob("*.c")) if literal.search(path.read_text()))
    text = holder.read_text()
    holder.unlink()  # a hard link to the original folder's file: replace it, never write through it
    holder.write_text(literal.sub("9949", text, count=1))
    runs = run_builds(tampered, (BASELINE, BuildConfig(GCC, "-O1")), compiled.inputs, tmp_path / "builds")
    reference = build_and_run(compiled.folder, BASELINE, compiled.inputs, tmp_path / "reference")
    for run in runs.values():
        cell = judge(run, reference, compiled.specs, compiled.golden)
        assert cell.status == DIFFERS and "vs golden" in cell.detail, cell
    refused = build_and_run(compiled.folder, BuildConfig(GCC, "-O2", ("-fno-such-option",)), compiled.inputs,
                            tmp_path / "refused")
    assert refused.status == BUILD_FAILED and "no-such-option" in refused.detail
    # A program that never ends, not a tiny timeout: a fast program could finish inside any timeout we race it
    # against (it did on a loaded CI machine).  A constructor that spins runs before main.
    hanging = mirror_folder(compiled.folder, tmp_path / "hanging")
    network = hanging / "Network.c"
    source = network.read_text()
    network.unlink()  # a hard link to the original folder's file: replace it, never write through it
    network.write_text(source + "\nstatic void dc_hang(void) __attribute__((constructor));\n"
                       "static void dc_hang(void) { volatile unsigned long spin = 0; for (;;) spin++; }\n")
    stopped = build_and_run(hanging, BASELINE, compiled.inputs, tmp_path / "stopped", timeout=2.0)
    assert stopped.status == RUN_FAILED and stopped.detail == "no result after 2 s", stopped
