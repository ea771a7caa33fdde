"""``deeploy-core new-plugin``: a plugin of every kind is rendered, pip-installed and passes its own tests.

The six generated distributions are installed for real (``pip install``, offline, without build isolation) into
one throw-away venv that sees this environment's packages through a ``.pth`` file (the core, its dependencies and
the bundled plugins the generated tests compile on), never into this environment itself.  In that venv each
plugin's own tests (the core's conformance suites) must pass, ``deeploy-core plugins`` must list the six with
status ``ok``, and the commands of each README's "Use it" section must run.  The argument checks, the missing-copier
error and the determinism of the output are checked without installing anything.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from onnx import TensorProto, helper

from deeploy_core.errors import DeeployError
from deeploy_core.plugin_api_version import API_VERSION
from deeploy_core.plugin_template import KINDS, TEMPLATE, check_name, new_plugin
from deeploy_core.plugins.timing import SLOW_PLUGIN_VARIABLE
from deeploy_core.testing.models import conformance_model
from tests.support.plugin_boundary import boundary_violations

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, packaged (a dependency of the test extra there)
    import tomli as tomllib

NAMES = {kind: f"tpl-{kind}" for kind in KINDS}
"""The plugin generated for each kind (distributions deeploy-tpl-<kind>, packages deeploy_tpl_<kind>)."""

EXTENSIONS = {
    "platform": {"platform": ["tpl-platform"]},
    "memory-level": {"memory_level": ["tpl-memory-level"]},
    "tiler": {"tiler": ["tpl-tiler"]},
    "allocator": {"allocator": ["tpl-allocator"]},
    "code-transformation": {"code_transformation": ["tpl-code-transformation"]},
    "operator": {"operator": ["generic-c.tpl-operator"]},
}
"""What ``deeploy-core plugins --json`` must show each generated plugin registering."""

PASSED = re.compile(r"(\d+) passed")


def environment() -> dict[str, str]:
    """This environment without what would leak into a child: the plugin allow-list, a Python path."""
    env = {key: value for key, value in os.environ.items() if key not in ("DEEPLOY_CORE_PLUGINS", "PYTHONPATH")}
    env["COLUMNS"] = "200"
    env[SLOW_PLUGIN_VARIABLE] = "inf"  # a loaded machine must not add slow-plugin warnings to stderr
    return env


def cli(*args: str, cwd: Path, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, "-m", "deeploy_core", *args], cwd=cwd, capture_output=True, text=True,
                          env=environment(), timeout=600)


# -- rendered into a temporary folder, installed into a throw-away venv -----------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each kind's plugin, made by the command as a user would run it (a relative DIR)."""
    root = tmp_path_factory.mktemp("new-plugins")
    folders = {}
    for kind, name in NAMES.items():
        result = cli("new-plugin", kind, name, f"deeploy-{name}", cwd=root)
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        assert result.stdout.startswith(f"created deeploy-{name}: {kind} plugin '{name}' (distribution "
                                        f"deeploy-{name}, package deeploy_{name.replace('-', '_')})\n")
        folders[kind] = root / f"deeploy-{name}"
    return folders


@pytest.fixture(scope="module")
def plugin_venv(generated: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv that sees this environment's site directories and holds the six generated plugins; its python."""
    root = tmp_path_factory.mktemp("new-plugin-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    target_site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip()
    parents = dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["purelib"]])
    Path(target_site, "deeploy_core_parent_env.pth").write_text(
        "".join(f"import site; site.addsitedir({path!r})\n" for path in parents))
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--no-cache-dir", *map(str, generated.values())],
        cwd=root, capture_output=True, text=True, env=environment(), timeout=600)
    assert installed.returncode == 0, installed.stderr
    return python


@pytest.mark.parametrize("kind", KINDS)
def test_generated_plugin_passes_its_own_tests(kind: str, generated: dict[str, Path], plugin_venv: Path,
                                               tmp_path: Path) -> None:
    """Run from another folder, so that the tests import the installed package (and its installed C files)."""
    folder = generated[kind]
    ran = subprocess.run(
        [str(plugin_venv), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "basetemp"),
         str(folder / "tests")],
        cwd=tmp_path, capture_output=True, text=True, env=environment(), timeout=900)
    summary = ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else ""
    assert ran.returncode == 0, "\n".join((ran.stdout + ran.stderr).splitlines()[-40:])
    passed = PASSED.search(summary)
    assert passed and int(passed.group(1)) >= 10 and "failed" not in summary and "error" not in summary, summary
    print(f"{kind}: {summary}")


def test_installed_plugins_are_discovered(plugin_venv: Path, tmp_path: Path) -> None:
    result = cli("plugins", "--json", cwd=tmp_path, python=str(plugin_venv))
    assert result.returncode == 0, result.stderr
    listed = {entry["name"]: entry for entry in json.loads(result.stdout)}
    for kind, name in NAMES.items():
        entry = listed[name]
        assert (entry["status"], entry["error"]) == ("ok", None), entry
        assert entry["distribution"] == f"deeploy-{name}" and entry["version"] == "0.1.0"
        assert entry["extensions"] == EXTENSIONS[kind]
    where = subprocess.run([str(plugin_venv), "-c", "import deeploy_tpl_operator; print(deeploy_tpl_operator.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, env=environment(), check=True).stdout
    assert Path(where.strip()).is_relative_to(plugin_venv.parent.parent), "the plugin must come from the venv"
    assert subprocess.run([sys.executable, "-c", "import deeploy_tpl_operator"], capture_output=True,
                          env=environment(), cwd=tmp_path).returncode != 0, "nothing may land in this environment"


def _model_for(kind: str) -> onnx.ModelProto:
    """What each README's ``model.onnx`` stands for: a network the extension's commands can compile."""
    if kind == "platform":
        return conformance_model("mlp")  # Gemm, Relu: ops of the tiny platform
    if kind == "operator":
        shape = [1, 3, 8, 8]
        node = helper.make_node("TplOperator", ["x"], ["y"], domain="com.example", alpha=0.5, name="op")
        graph = helper.make_graph([node], "custom", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                       helper.make_opsetid("com.example", 1)])
    return conformance_model("cnn")


def _use_it_commands(readme: str) -> list[list[str]]:
    section = readme.split("## Use it", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("kind", KINDS)
def test_readme_commands_run(kind: str, generated: dict[str, Path], plugin_venv: Path, tmp_path: Path) -> None:
    commands = _use_it_commands((generated[kind] / "README.md").read_text(encoding="utf-8"))
    assert commands and all(argv[0] == "deeploy-core" for argv in commands)
    onnx.save(_model_for(kind), tmp_path / "model.onnx")
    if kind == "operator":  # ONNX Runtime does not run the custom op: inputs and outputs of its reference
        x = np.random.default_rng(3).standard_normal((1, 3, 8, 8)).astype(np.float32)
        np.savez(tmp_path / "in.npz", x)
        np.savez(tmp_path / "golden.npz", (np.float32(0.5) * np.maximum(x, np.float32(0))).astype(np.float32))
    for argv in commands:
        result = cli(*argv[1:], cwd=tmp_path, python=str(plugin_venv))
        assert result.returncode == 0, f"{shlex.join(argv)}:\n{result.stdout[-2000:]}{result.stderr[-2000:]}"
        if argv[1] == "supported-ops":
            assert ("TplOperator" if kind == "operator" else "Softmax") in result.stdout
    if kind == "code-transformation":
        assert "/* tpl-code-transformation: layer 0 " in (tmp_path / "out" / "Network.c").read_text(encoding="utf-8")


# -- the output: complete, deterministic, within the plugin API -------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_output_is_deterministic_and_names_no_path(kind: str, tmp_path: Path) -> None:
    first = new_plugin(kind, "same-name", tmp_path / "one")
    second = new_plugin(kind, "same-name", tmp_path / "elsewhere" / "two")
    assert first == second
    for relative in first:
        text = (tmp_path / "one" / relative).read_bytes()
        assert text == (tmp_path / "elsewhere" / "two" / relative).read_bytes(), relative
        assert str(tmp_path).encode() not in text and b"/home/" not in text and b"/work/" not in text, relative
        assert not re.search(rb"\b20\d\d-\d\d-\d\d\b", text), f"{relative} holds a date"
    assert {"pyproject.toml", "README.md", "deeploy_same_name/__init__.py", "deeploy_same_name/plugin.py",
            "tests/test_same_name.py"} <= {path.as_posix() for path in first}
    assert not any(path.name.startswith(".copier") for path in first), "no answers file (it would name the template)"
    project = yaml.safe_load((TEMPLATE / "copier.yml").read_text(encoding="utf-8"))
    assert project["api_version"]["default"] == API_VERSION, "copier.yml's default must follow the plugin API"
    assert f'DEEPLOY_CORE_API = "{API_VERSION}"' in (tmp_path / "one" / "deeploy_same_name" / "plugin.py").read_text()


def test_generated_packages_import_only_the_plugin_api(tmp_path: Path) -> None:
    packages = [tmp_path / kind / f"deeploy_{kind.replace('-', '_')}" for kind in KINDS]
    for kind in KINDS:
        new_plugin(kind, kind, tmp_path / kind)
    assert boundary_violations(packages, root=tmp_path) == []


def test_pyproject_declares_the_entry_point_and_the_kernels(tmp_path: Path) -> None:
    new_plugin("operator", "my-op", tmp_path / "op")
    project = tomllib.loads((tmp_path / "op" / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == "deeploy-my-op"
    assert project["project"]["entry-points"]["deeploy_core.plugins"] == {"my-op": "deeploy_my_op.plugin"}
    assert project["tool"]["setuptools"]["package-data"] == {"deeploy_my_op": ["runtime/include/*.h",
                                                                               "runtime/src/*.c"]}


# -- arguments ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "MyPlugin", "my_plugin", "-x", "x-", "a--b", "1st", "x" * 41, "my plugin",
                                  "../escape", "ü"])
def test_a_bad_name_is_refused_in_one_line(name: str, tmp_path: Path) -> None:
    with pytest.raises(DeeployError, match=r"^plugin name .* is not valid: use lower-case letters"):
        check_name(name)
    result = cli("new-plugin", "allocator", "--", name, "out", cwd=tmp_path)  # "--": "-x" is a name here
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("error: plugin name ")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("kind", "name", "reason"), [
    ("allocator", "first-fit", "allocator 'first-fit' is already registered by plugin 'deeploy_core.builtin'"),
    ("tiler", "double-buffering", "tiler 'double-buffering' is already registered by plugin 'deeploy_core.builtin'"),
    ("platform", "generic-c", "a package 'deeploy_generic_c' is already installed here"),
    ("allocator", "core", "a package 'deeploy_core' is already installed here"),
])
def test_a_taken_name_is_refused(kind: str, name: str, reason: str, tmp_path: Path) -> None:
    result = cli("new-plugin", kind, name, "out", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr == f"error: {reason}: choose another plugin name\n"
    assert not (tmp_path / "out").exists()


def test_a_non_empty_folder_is_never_touched(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("# the user's own\n")
    result = cli("new-plugin", "allocator", "mine", "mine", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == ("error: mine is not empty: choose a new (or empty) folder for the plugin; "
                             "nothing was written\n")
    assert [path.name for path in folder.iterdir()] == ["pyproject.toml"]
    assert (folder / "pyproject.toml").read_text() == "# the user's own\n"
    (tmp_path / "a-file").write_text("x")
    result = cli("new-plugin", "allocator", "mine", "a-file", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr == ("error: a-file exists and is not a folder: choose a new "
                                                        "folder for the plugin\n")


def test_an_empty_folder_is_filled(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = cli("new-plugin", "tiler", "filled", "empty", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "empty" / "deeploy_filled" / "plugin.py").is_file()


def test_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    result = cli("new-plugin", "scheduler", "x", "out", cwd=tmp_path)
    assert result.returncode == 2 and "Invalid value for 'KIND': 'scheduler' is not one of 'platform'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_without_copier_the_error_names_the_extra(tmp_path: Path) -> None:
    probe = ("import sys; sys.modules['copier'] = None\n"
             "from deeploy_core.cli import main\n"
             "sys.argv = ['deeploy-core', 'new-plugin', 'allocator', 'no-copier', 'out']\n"
             "main()\n")
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                            env=environment(), timeout=120)
    assert result.returncode == 2
    assert result.stderr == ("error: deeploy-core new-plugin needs copier: pip install 'deeploy-core[template]' "
                             "(or pip install 'copier>=9')\n")
    assert not (tmp_path / "out").exists()
