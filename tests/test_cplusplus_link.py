"""A C++ application links the C library a folder builds: ``Network.h`` is included from C++17 and called.

Firmware and host programs are often C++ (Arduino, Zephyr, mbed, test
harnesses).  The folder stays C: its Makefile builds ``libnetwork.a`` with the
C compiler, and the program here, written as such an application would be
(``<cstring>``, ``<cstdio>``, ``std::vector``), includes ``Network.h``, runs the
network and compares its outputs with ONNX Runtime's.  Without the ``extern
"C"`` guard of the generated headers the C++ object would ask for mangled
names (``_Z11InitNetworkv``) and the link would fail.  It is built with g++ and
with clang++ under ``-Wall -Wextra -Werror -pedantic``, for the default API and
for ``--prefix kws --arena user`` (the program then owns the arena, an object
of the type ``Network.h`` declares for it).  Every header a folder ships must
also compile as C++ on its own: no C-only construct may reach an includer.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi
from deeploy_core.testing.cli_outcomes import CliLab
from deeploy_core.testing.models import conformance_model
from deeploy_core.validate.reference import run_reference

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")

BARE_ENVIRONMENT = {"PATH": "/usr/bin:/bin"}
CXX_FLAGS = ("-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic")
COMPILERS = ("g++", "clang++")
VARIANTS = {
    "default": ("cnn", DEFAULT_API, ()),
    "kws-user-arena": ("residual_block", NetworkApi(prefix="kws", arena="user"), ("--prefix", "kws", "--arena", "user")),
}
"""Variant → (catalogue model, the API it is compiled with, the compile options that select that API)."""


def compiler(name: str) -> str:
    """The path of C++ compiler ``name``, or a skip naming what is missing."""
    path = shutil.which(name, path=BARE_ENVIRONMENT["PATH"])
    if path is None:
        pytest.skip(f"{name} is not installed in {BARE_ENVIRONMENT['PATH']}: the C++ link is checked with the "
                    f"compilers that are")
    return path


def compile_folder(tmp_path: Path, model_name: str, options: tuple[str, ...], platform: str = "generic-c"
                   ) -> tuple[Path, np.ndarray, np.ndarray]:
    """Compile a catalogue model (with a self-test from ONNX Runtime's outputs); returns folder, input, expected."""
    model = tmp_path / f"{model_name}.onnx"
    onnx.save(conformance_model(model_name), model)
    shape = [dim.dim_value for dim in onnx.load(model).graph.input[0].type.tensor_type.shape.dim]
    inputs = np.random.default_rng(29).standard_normal(shape).astype(np.float32)
    [expected] = run_reference(model, {"x": inputs})
    np.savez(tmp_path / "inputs.npz", inputs)
    np.savez(tmp_path / "outputs.npz", expected)
    folder = tmp_path / "network"
    lab = CliLab(tmp_path / "runs", {"DEEPLOY_CORE_PLUGINS": platform})
    outcome = lab.invoke(["compile", str(model), "-o", str(folder), "--platform", platform, "--quiet",
                          "--inputs", str(tmp_path / "inputs.npz"), "--outputs", str(tmp_path / "outputs.npz"),
                          *options])
    assert outcome.ok, outcome.describe()
    return folder, inputs, expected


def cpp_floats(values: np.ndarray) -> str:
    return ", ".join(f"{float(value)!r}f" for value in values.reshape(-1))


def arena_lines(api: NetworkApi, header: str) -> tuple[list[str], str]:
    """(definitions, the expression passed to InitNetwork) of the program's arena; none with a static arena."""
    if not api.user_arena:
        return [], ""
    arena_type = getattr(api, "arena_type", None)
    if arena_type is not None and arena_type in header:  # the type Network.h declares for it
        return [f"alignas({api.arena_alignment}) {arena_type} arena;"], "&arena"
    return [f"alignas({api.arena_alignment}) unsigned char arena[{api.arena_bytes}];"], "arena"


def program(api: NetworkApi, header: str, inputs: np.ndarray, expected: np.ndarray) -> str:
    """main.cpp: run the network once on ``inputs`` and compare every output element with ``expected``."""
    definitions, arena = arena_lines(api, header)
    init = [f"    {api.init}();"]
    if api.user_arena:
        init = [
            f"    if ({api.init}(nullptr) != -1) {{ std::puts(\"a null arena was accepted\"); return 1; }}",
            f"    if ({api.arena_alignment} > 1 && {api.init}(reinterpret_cast<unsigned char *>({arena}) + 1) != -1) {{",
            "        std::puts(\"a misaligned arena was accepted\");",
            "        return 1;",
            "    }",
            f"    if ({api.init}({arena}) != 0) {{ std::puts(\"the arena was refused\"); return 1; }}",
        ]
    return "\n".join([
        "#include <cmath>",
        "#include <cstdio>",
        "#include <cstring>",
        "#include <vector>",
        "",
        '#include "Network.h"',
        "",
        "namespace {",
        *definitions,
        f"const std::vector<float> input = {{{cpp_floats(inputs)}}};",
        f"const std::vector<float> expected = {{{cpp_floats(expected)}}};",
        "}  // namespace",
        "",
        "int main() {",
        *init,
        f"    if ({api.num_inputs} != 1 || {api.num_outputs} != 1) {{ std::puts(\"unexpected API\"); return 1; }}",
        f"    if ({api.inputs_bytes}[0] != input.size() * sizeof(float)) {{ std::puts(\"input size\"); return 1; }}",
        f"    std::memcpy({api.inputs}[0], input.data(), {api.inputs_bytes}[0]);",
        f"    {api.run}();",
        f"    std::vector<float> actual({api.outputs_bytes}[0] / sizeof(float));",
        "    if (actual.size() != expected.size()) { std::puts(\"output size\"); return 1; }",
        f"    std::memcpy(actual.data(), {api.outputs}[0], {api.outputs_bytes}[0]);",
        "    std::size_t mismatches = 0;",
        "    for (std::size_t i = 0; i < actual.size(); ++i) {",
        "        if (!(std::fabs(actual[i] - expected[i]) <= 1e-4f)) {",
        "            std::printf(\"output %zu: %.9g, expected %.9g\\n\", i, actual[i], expected[i]);",
        "            ++mismatches;",
        "        }",
        "    }",
        "    std::printf(\"%zu outputs, %zu mismatches\\n\", actual.size(), mismatches);",
        "    return mismatches == 0 ? 0 : 1;",
        "}",
        "",
    ])


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def built_folder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> tuple[Path, NetworkApi, np.ndarray, np.ndarray]:
    """A compiled folder whose libnetwork.a was built by its own Makefile with the C compiler."""
    model_name, api, options = VARIANTS[request.param]
    folder, inputs, expected = compile_folder(tmp_path_factory.mktemp(request.param), model_name, options)
    built = subprocess.run(["make", "-C", str(folder)], capture_output=True, text=True, env=BARE_ENVIRONMENT)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (folder / "libnetwork.a").is_file()
    return folder, api, inputs, expected


@pytest.mark.parametrize("name", COMPILERS)
def test_a_cplusplus_program_links_the_c_library_and_gets_the_reference_outputs(
        built_folder: tuple[Path, NetworkApi, np.ndarray, np.ndarray], name: str, tmp_path: Path) -> None:
    folder, api, inputs, expected = built_folder
    cxx = compiler(name)
    header = (folder / "Network.h").read_text(encoding="utf-8")
    source = tmp_path / "main.cpp"
    source.write_text(program(api, header, inputs, expected), encoding="utf-8")
    objects = tmp_path / "main.o"
    compiled = subprocess.run([cxx, *CXX_FLAGS, f"-I{folder}", "-c", str(source), "-o", str(objects)],
                              capture_output=True, text=True, env=BARE_ENVIRONMENT)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    # the C++ object asks for the C names the library defines, not mangled ones (_Z11RunNetworkv)
    undefined = subprocess.run(["nm", "-u", str(objects)], capture_output=True, text=True, check=True).stdout.split()
    assert api.run in undefined and api.init in undefined, undefined
    executable = tmp_path / "app"
    linked = subprocess.run([cxx, str(objects), str(folder / "libnetwork.a"), "-lm", "-o", str(executable)],
                            capture_output=True, text=True, env=BARE_ENVIRONMENT)
    assert linked.returncode == 0, linked.stdout + linked.stderr
    ran = subprocess.run([str(executable)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.strip().endswith(f"{expected.size} outputs, 0 mismatches"), ran.stdout


def shipped_headers(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*.h"))


def check_headers_compile_as_cplusplus(folder: Path) -> None:
    """Every header of ``folder``, alone, through g++ and clang++ as C++17 (include paths as the Makefile's)."""
    headers = shipped_headers(folder)
    assert {"Network.h", "Network_weights.h"} <= {path.name for path in headers}
    include_dirs = sorted({f"-I{path.parent}" for path in headers})
    for name in COMPILERS:
        cxx = shutil.which(name, path=BARE_ENVIRONMENT["PATH"])
        if cxx is None:
            continue
        for header in headers:
            checked = subprocess.run([cxx, *CXX_FLAGS, "-fsyntax-only", *include_dirs, "-x", "c++", str(header)],
                                     capture_output=True, text=True, env=BARE_ENVIRONMENT)
            # clang warns about unused static inline functions of a header given as the main file: not an error
            # an includer sees, so that one warning is not made an error here
            if checked.returncode != 0 and name == "clang++":
                checked = subprocess.run([cxx, *CXX_FLAGS, "-Wno-unused-function", "-fsyntax-only", *include_dirs,
                                          "-x", "c++", str(header)], capture_output=True, text=True,
                                         env=BARE_ENVIRONMENT)
            assert checked.returncode == 0, f"{name} {header.relative_to(folder)}:\n{checked.stderr}"


def test_every_header_of_the_folder_compiles_as_cplusplus(
        built_folder: tuple[Path, NetworkApi, np.ndarray, np.ndarray]) -> None:
    check_headers_compile_as_cplusplus(built_folder[0])


def test_every_header_of_a_pulp_cluster_folder_compiles_as_cplusplus(tmp_path: Path) -> None:
    """The cluster's folder ships its HAL, transfer and emulator headers too (tiled: the transfer header is used)."""
    pytest.importorskip("deeploy_pulp_cluster", reason="the pulp-cluster platform (plugins/pulp_cluster) is not "
                                                       "installed")
    folder, _, _ = compile_folder(tmp_path, "cnn", (), platform="pulp-cluster")
    assert (folder / "runtime" / "include" / "dc_pulp_transfer.h").is_file()
    check_headers_compile_as_cplusplus(folder)
