"""The output folder is the deliverable: it builds and checks itself with a C compiler and ``make`` alone (issue 20).

Every Deeploy peer network is compiled with ``compile --inputs --outputs``
for generic-c and for pulp-cluster, the folder is copied to an empty
directory (the original removed), and ``make -C COPY test`` runs with nothing
but ``PATH=/usr/bin:/bin`` in its environment: no virtual environment, no
plugin folder, no compiler flags from outside.  Besides, every ``#include
"…"`` in the folder must resolve inside it, the CMake build must produce the
same library target, and a folder's README must name the API it was
compiled with.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import onnx
import pytest

from deeploy_core.testing.cli_outcomes import CliLab, CliOutcome
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
pytest.importorskip("deeploy_pulp_cluster", reason="the cluster platform (plugins/pulp_cluster) is not installed")

ROOT = peer_tests_root(Path(__file__).parent)
PEERS = find_peer_tests(ROOT) if ROOT else []
MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"
PLATFORMS = ("generic-c", "pulp-cluster")
BARE_ENVIRONMENT = {"PATH": "/usr/bin:/bin"}
"""What ``env -i PATH=/usr/bin:/bin make`` leaves: the system compiler and make, nothing of ours."""
L2_NEEDED = re.compile(r"L2 needs at least (\d+) bytes")
L2_GRANULE = 64 * 1024


def compile_folder(tmp_path: Path, model: Path, output: Path, *arguments: str) -> CliOutcome:
    lab = CliLab(tmp_path / "runs", {"DEEPLOY_CORE_PLUGINS": ",".join(PLATFORMS)})
    return lab.invoke(["compile", str(model), "-o", str(output), "--quiet", *arguments])


def compile_peer(tmp_path: Path, peer: PeerTest, platform: str, output: Path) -> CliOutcome:
    """The peer with its inputs and golden outputs; on the cluster with the L2 its one-line diagnosis asks for,
    when the default 512 KiB cannot hold it (tensors do not live in L3 yet)."""
    arguments = ["--platform", platform, "--inputs", str(peer.inputs), "--outputs", str(peer.outputs),
                 *([] if peer.is_float else ["--atol", "0"])]  # float outputs by the default rule (scale, cosine)
    outcome = compile_folder(tmp_path, peer.model, output, *arguments)
    needed = L2_NEEDED.search(outcome.stderr)
    if platform == "pulp-cluster" and not outcome.ok and needed:
        l2 = -(-int(needed.group(1)) // L2_GRANULE) * L2_GRANULE
        outcome = compile_folder(tmp_path, peer.model, output, *arguments, "--l2", str(l2))
    return outcome


def moved_alone(folder: Path, tmp_path: Path) -> Path:
    """``folder`` copied into an empty directory, the original removed: the copy is all there is."""
    alone = tmp_path / "elsewhere" / "network"
    shutil.copytree(folder, alone)
    shutil.rmtree(folder)
    return alone


def bare_make(folder: Path, *targets: str, **variables: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-C", str(folder), *targets, *(f"{key}={value}" for key, value in variables.items())],
                          capture_output=True, text=True, env=BARE_ENVIRONMENT, timeout=900)


def unresolved_includes(folder: Path) -> list[str]:
    """``#include "…"`` lines of the folder's C files that no file in the folder's include paths satisfies."""
    search = [folder, folder / "runtime" / "include", folder / "runtime" / "host"]
    missing = []
    for source in sorted([*folder.rglob("*.c"), *folder.rglob("*.h")]):
        for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', source.read_text(encoding="utf-8"), re.MULTILINE):
            if not any((directory / name).is_file() for directory in (source.parent, *search)):
                missing.append(f"{source.relative_to(folder)}: {name}")
    return missing


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("platform", [
    pytest.param("generic-c"),
    pytest.param("pulp-cluster", marks=pytest.mark.heavy_model(
        reason="every peer's cluster folder (test_peer_cluster.py validates them all in place)"))])
@pytest.mark.parametrize("peer", PEERS, ids=[peer.name for peer in PEERS])
def test_peer_folder_passes_its_self_test_alone(peer: PeerTest, platform: str, tmp_path: Path) -> None:
    outcome = compile_peer(tmp_path, peer, platform, tmp_path / "out")
    assert outcome.ok, outcome.describe()
    alone = moved_alone(tmp_path / "out", tmp_path)
    assert unresolved_includes(alone) == []
    built = bare_make(alone, "test")
    assert built.returncode == 0 and "self-test passed" in built.stdout, built.stdout + built.stderr
    assert "MISMATCH" not in built.stdout
    names = [tensor.name for tensor in onnx.load(str(peer.model), load_external_data=False).graph.output]
    for name in names:  # quoted: a tensor called "output" read as "output output:" (issue 33 point 10)
        assert f"output '{name}': max |expected|" in built.stdout, built.stdout


@pytest.mark.skipif(ROOT is None, reason=MISSING)
def test_every_peer_network_is_covered() -> None:
    assert len(PEERS) >= 84


def tiny_model(tmp_path: Path) -> Path:
    from deeploy_core.testing.models import conformance_model
    import onnx

    path = tmp_path / "cnn.onnx"
    onnx.save(conformance_model("cnn"), path)
    return path


def test_a_wrong_expectation_fails_make_test(tmp_path: Path) -> None:
    """The self-test judges: golden data one element off gives a non-zero exit and says which output."""
    import numpy as np

    from deeploy_core.validate.reference import run_reference

    model = tiny_model(tmp_path)
    data = np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32)
    np.savez(tmp_path / "inputs.npz", x=data)
    [golden] = run_reference(model, {"x": data})
    golden.flat[0] += 1.0
    np.savez(tmp_path / "wrong.npz", y=golden)
    outcome = compile_folder(tmp_path, model, tmp_path / "out", "--inputs", str(tmp_path / "inputs.npz"),
                             "--outputs", str(tmp_path / "wrong.npz"))
    assert outcome.ok, outcome.describe()
    built = bare_make(tmp_path / "out", "test")
    assert built.returncode != 0 and "MISMATCH" in built.stdout and "self-test FAILED" in built.stdout, built.stdout


@pytest.mark.parametrize("platform", PLATFORMS)
def test_library_alone_and_cmake_build(platform: str, tmp_path: Path) -> None:
    """``make`` builds libnetwork.a without host-only code; CMake builds the same ``network`` target."""
    outcome = compile_folder(tmp_path, tiny_model(tmp_path), tmp_path / "out", "--platform", platform)
    assert outcome.ok, outcome.describe()
    folder = moved_alone(tmp_path / "out", tmp_path)
    built = bare_make(folder)
    assert built.returncode == 0, built.stderr
    members = subprocess.run(["ar", "t", str(folder / "libnetwork.a")], capture_output=True, text=True,
                             check=True).stdout.split()
    assert {"Network.o", "Network_weights.o"} <= set(members)
    assert not [member for member in members if "emulator" in member], "host emulation is not part of the library"
    refused = bare_make(folder, "test")
    assert refused.returncode != 0 and "compile with --inputs" in refused.stderr
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake not installed (Debian package cmake): the CMake half is not checked")
    configured = subprocess.run([cmake, "-S", str(folder), "-B", str(tmp_path / "cmake-build")], capture_output=True,
                                text=True, env=BARE_ENVIRONMENT)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    compiled = subprocess.run([cmake, "--build", str(tmp_path / "cmake-build"), "--target", "network"],
                              capture_output=True, text=True, env=BARE_ENVIRONMENT)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert (tmp_path / "cmake-build" / "libnetwork.a").is_file()


def test_the_folder_readme_names_the_compiled_api(tmp_path: Path) -> None:
    model = tiny_model(tmp_path)
    plain = compile_folder(tmp_path, model, tmp_path / "plain")
    named = compile_folder(tmp_path, model, tmp_path / "named", "--prefix", "kws", "--arena", "user")
    assert plain.ok and named.ok, plain.describe() + named.describe()
    plain_readme = (tmp_path / "plain" / "README.md").read_text(encoding="utf-8")
    named_readme = (tmp_path / "named" / "README.md").read_text(encoding="utf-8")
    assert "InitNetwork();" in plain_readme and "DeeployNetwork_inputs[0]" in plain_readme
    assert "kws_InitNetwork(arena)" in named_readme and "kws_ARENA_ALIGNMENT" in named_readme
    assert "DeeployNetwork_" not in named_readme


def test_another_compiler_or_flags_rebuild_the_objects(tmp_path: Path) -> None:
    """The objects remember what built them: ``make CC=… CFLAGS=…`` after a host build must not reuse them."""
    outcome = compile_folder(tmp_path, tiny_model(tmp_path), tmp_path / "out")
    assert outcome.ok, outcome.describe()
    folder = tmp_path / "out"
    assert bare_make(folder, CFLAGS="-O0").returncode == 0
    assert bare_make(folder, "-q", "libnetwork.a", CFLAGS="-O0").returncode == 0, "same flags: up to date"
    assert bare_make(folder, "-q", "libnetwork.a", CFLAGS="-O1").returncode == 1, "other flags: out of date"
    assert bare_make(folder, "-q", "libnetwork.a", CC="gcc", CFLAGS="-O1").returncode == 1, "other compiler"


def test_two_prefixed_folders_build_in_one_cmake_project(tmp_path: Path) -> None:
    """``--prefix`` names the CMake targets too, so two folders can be ``add_subdirectory()``-ed side by side."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake not installed (Debian package cmake)")
    model = tiny_model(tmp_path)
    for prefix in ("left", "right"):
        outcome = compile_folder(tmp_path, model, tmp_path / "project" / prefix, "--prefix", prefix)
        assert outcome.ok, outcome.describe()
    (tmp_path / "project" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(firmware LANGUAGES C)\n"
        "add_subdirectory(left)\nadd_subdirectory(right)\n", encoding="utf-8")
    build = tmp_path / "cmake-build"
    configured = subprocess.run([cmake, "-S", str(tmp_path / "project"), "-B", str(build)], capture_output=True,
                                text=True, env=BARE_ENVIRONMENT)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    compiled = subprocess.run([cmake, "--build", str(build), "--target", "left_network", "right_network"],
                              capture_output=True, text=True, env=BARE_ENVIRONMENT)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert (build / "left" / "libleft_network.a").is_file() and (build / "right" / "libright_network.a").is_file()


def test_a_hal_platform_folder_names_its_sdk_not_a_cortex_m4(tmp_path: Path) -> None:
    """Issue 33 point 10: pulp-cluster's README suggested a Cortex-M4 build; its code needs the chip SDK's HAL."""
    from deeploy_core.codegen.folder_readme import _cross_compile
    from deeploy_core.codegen.runtime_files import RuntimeFiles

    hal = _cross_compile(RuntimeFiles({}, {"runtime/include/pulp_hal.h": tmp_path}, {}, {}))
    plain = _cross_compile(RuntimeFiles({}, {"runtime/include/dcg_elementwise.h": tmp_path}, {}, {}))
    assert not any("cortex" in line for line in hal) and "AR=<SDK>-ar" in hal[0]
    assert "AR=arm-none-eabi-ar" in plain[0] and "-mfloat-abi=hard" in plain[1]
