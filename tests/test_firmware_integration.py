"""Two networks in one firmware image: ``--prefix`` keeps their symbols apart, ``--arena user`` lets them share RAM.

Each network is compiled into its own folder and built with that folder's
Makefile; a test program written here (as an application would be) links
both libraries, runs both networks and prints their outputs, which must
equal ONNX Runtime's.  With ``--arena user`` the two networks run one after
the other in one buffer the program owns, and ``InitNetwork`` refuses a NULL
or misaligned buffer.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from deeploy_core.testing.cli_outcomes import CliLab
from deeploy_core.testing.models import conformance_model
from deeploy_core.validate.reference import run_reference

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")

BARE_ENVIRONMENT = {"PATH": "/usr/bin:/bin"}
NETWORKS = {"cnn": "vision", "mlp": "sensor"}
"""Catalogue model → the prefix it is compiled with."""


def c_floats(values: np.ndarray) -> str:
    return ", ".join(f"{float(value)!r}f" for value in values.reshape(-1))


def build_networks(tmp_path: Path, *extra: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Compile and ``make`` each catalogue network under its prefix; returns prefix → (input, expected output)."""
    lab = CliLab(tmp_path / "runs", {"DEEPLOY_CORE_PLUGINS": "generic-c"})
    data: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for index, (name, prefix) in enumerate(sorted(NETWORKS.items())):
        model = tmp_path / f"{name}.onnx"
        onnx.save(conformance_model(name), model)
        outcome = lab.invoke(["compile", str(model), "-o", str(tmp_path / prefix), "--prefix", prefix, "--quiet",
                              *extra])
        assert outcome.ok, outcome.describe()
        built = subprocess.run(["make", "-C", str(tmp_path / prefix)], capture_output=True, text=True,
                               env=BARE_ENVIRONMENT)
        assert built.returncode == 0, built.stderr
        shape = [dim.dim_value for dim in onnx.load(model).graph.input[0].type.tensor_type.shape.dim]
        inputs = np.random.default_rng(index).standard_normal(shape).astype(np.float32)
        [expected] = run_reference(model, {"x": inputs})
        data[prefix] = (inputs, expected)
    return data


def run_program(tmp_path: Path, source: str) -> str:
    """Compile ``source`` against both folders' headers, link both libraries, run; returns stdout."""
    (tmp_path / "main.c").write_text(source, encoding="utf-8")
    libraries = [str(tmp_path / prefix / "libnetwork.a") for prefix in sorted(NETWORKS.values())]
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{tmp_path}", str(tmp_path / "main.c"),
                    *libraries, "-lm", "-o", str(tmp_path / "firmware")], check=True, env=BARE_ENVIRONMENT)
    ran = subprocess.run([str(tmp_path / "firmware")], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


def printed_outputs(stdout: str) -> dict[str, np.ndarray]:
    """``PREFIX: v v v …`` lines → prefix → values."""
    rows = [line.split(":", 1) for line in stdout.splitlines() if ":" in line]
    return {prefix: np.array(values.split(), dtype=np.float64) for prefix, values in rows}


def input_arrays(data: dict[str, tuple[np.ndarray, np.ndarray]]) -> list[str]:
    return [f"static const float {prefix}_data[] = {{{c_floats(inputs)}}};" for prefix, (inputs, _) in data.items()]


def print_lines(prefix: str) -> list[str]:
    """C lines that print the network's first output as ``PREFIX: v v …`` (copied out of the arena first)."""
    return [
        "    {",
        f"        const float *out = (const float *){prefix}_outputs[0];",
        f'        printf("{prefix}:");',
        f"        for (uint32_t i = 0; i < {prefix}_outputs_bytes[0] / sizeof(float); ++i) printf(\" %.9g\", out[i]);",
        '        printf("\\n");',
        "    }",
    ]


def assert_outputs(stdout: str, data: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    printed = printed_outputs(stdout)
    assert sorted(printed) == sorted(data), stdout
    for prefix, (_, expected) in data.items():
        np.testing.assert_allclose(printed[prefix], expected.reshape(-1), atol=1e-4, err_msg=prefix)


def test_two_prefixed_networks_link_and_run_in_one_program(tmp_path: Path) -> None:
    data = build_networks(tmp_path)
    lines = ["#include <stdint.h>", "#include <stdio.h>", "#include <string.h>",
             *(f'#include "{prefix}/Network.h"' for prefix in data), *input_arrays(data), "", "int main(void) {"]
    for prefix in data:
        lines += [f"    {prefix}_InitNetwork();",
                  f"    memcpy({prefix}_inputs[0], {prefix}_data, {prefix}_inputs_bytes[0]);",
                  f"    {prefix}_RunNetwork();"]
    for prefix in data:  # each network's outputs stay valid while the other runs: separate static arenas
        lines += print_lines(prefix)
    lines += ["    return 0;", "}", ""]
    assert_outputs(run_program(tmp_path, "\n".join(lines)), data)
    for prefix in data:  # every external symbol either carries the prefix or is a shared runtime kernel
        listed = subprocess.run(["nm", "-g", "--defined-only", str(tmp_path / prefix / "build" / "Network.o"),
                                 str(tmp_path / prefix / "build" / "Network_weights.o")],
                                capture_output=True, text=True, check=True).stdout
        symbols = [fields[-1] for fields in (line.split() for line in listed.splitlines()) if len(fields) == 3]
        assert symbols and all(symbol.startswith(f"{prefix}_") for symbol in symbols), symbols


def test_two_networks_share_one_user_arena(tmp_path: Path) -> None:
    """One buffer, the larger of the two arena sizes, aligned for both: each network runs in it in turn."""
    data = build_networks(tmp_path, "--arena", "user")
    prefixes = list(data)
    size = " > ".join(f"{prefix}_ARENA_BYTES" for prefix in prefixes[:2])
    biggest = f"({size} ? {prefixes[0]}_ARENA_BYTES : {prefixes[1]}_ARENA_BYTES)"
    alignment = f"({prefixes[0]}_ARENA_ALIGNMENT * {prefixes[1]}_ARENA_ALIGNMENT)"
    lines = ["#include <stdint.h>", "#include <stdio.h>", "#include <string.h>",
             *(f'#include "{prefix}/Network.h"' for prefix in prefixes), *input_arrays(data), "",
             f"static unsigned char shared[{biggest} + {alignment}];", "", "int main(void) {",
             f"    unsigned char *arena = shared + ({alignment} - (uintptr_t)shared % {alignment}) % {alignment};"]
    for prefix in prefixes:
        lines += [f"    if ({prefix}_InitNetwork(NULL) == 0) {{ printf(\"NULL accepted\\n\"); return 1; }}",
                  f"    if ({prefix}_ARENA_ALIGNMENT > 1 && {prefix}_InitNetwork(arena + 1) == 0) "
                  f"{{ printf(\"misaligned accepted\\n\"); return 1; }}",
                  f"    if ({prefix}_InitNetwork(arena) != 0) {{ printf(\"aligned refused\\n\"); return 1; }}",
                  f"    memcpy({prefix}_inputs[0], {prefix}_data, {prefix}_inputs_bytes[0]);",
                  f"    {prefix}_RunNetwork();",
                  *print_lines(prefix)]  # printed before the next network overwrites the shared arena
    lines += ["    return 0;", "}", ""]
    assert_outputs(run_program(tmp_path, "\n".join(lines)), data)
    for prefix in prefixes:
        source = (tmp_path / prefix / "Network.c").read_text(encoding="utf-8")
        assert f"int {prefix}_InitNetwork(void *arena)" in source and " dc_arena;" not in source, "no static arena of its own"
