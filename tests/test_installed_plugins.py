"""Plugins installed with a real ``pip install`` into a fresh venv, seen through the CLI.

The venv reuses this environment's packages (deeploy-core and its dependencies)
through a site directory, so only the tiny test plugins under
``tests/plugin_packages`` are installed, offline, into it.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import onnx
import pytest

from deeploy_core.plugins.timing import SLOW_PLUGIN_VARIABLE
from deeploy_core.testing.models import CONFORMANCE_MODELS

PACKAGES = Path(__file__).parent / "plugin_packages"
PLUGIN_DIRS = sorted(path for path in PACKAGES.iterdir() if (path / "pyproject.toml").exists())


@pytest.fixture(scope="session")
def plugin_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding the test plugins; returns its python executable."""
    root = tmp_path_factory.mktemp("plugin-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    target_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    parent_sites = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    lines = [f"import site; site.addsitedir({path!r})" for path in dict.fromkeys(parent_sites)]
    Path(target_site, "deeploy_core_parent_env.pth").write_text("\n".join(lines) + "\n")
    build_dir = tmp_path_factory.mktemp("plugin-build")
    sources = [shutil.copytree(path, build_dir / path.name) for path in PLUGIN_DIRS]  # builds write into the source
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
         "--no-index", "--no-build-isolation", "--no-cache-dir", *map(str, sources)],
        check=True, cwd=build_dir,
    )
    return python


def run_cli(
    python: Path, *args: str, allow_list: str | None = None, slow_seconds: str | None = "inf"
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in the venv; the slow-plugin warning is off unless ``slow_seconds`` says otherwise.

    (On a loaded machine any plugin may cross the default threshold now and
    then, and most tests here check that stderr stays empty.)
    """
    env = {key: value for key, value in os.environ.items() if key not in ("DEEPLOY_CORE_PLUGINS", SLOW_PLUGIN_VARIABLE)}
    if allow_list is not None:
        env["DEEPLOY_CORE_PLUGINS"] = allow_list
    if slow_seconds is not None:
        env[SLOW_PLUGIN_VARIABLE] = slow_seconds
    env["COLUMNS"] = "200"  # wide enough that the table never wraps a plugin name
    return subprocess.run([str(python), "-m", "deeploy_core", *args], capture_output=True, text=True, env=env)


def listing(python: Path, *switches: str, allow_list: str | None = None) -> dict[str, dict[str, Any]]:
    result = run_cli(python, *switches, "plugins", "--json", allow_list=allow_list)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return {entry["name"]: entry for entry in json.loads(result.stdout) if entry["name"] != "deeploy_core.builtin"}


def test_installed_plugin_is_discovered_and_listed(plugin_venv: Path) -> None:
    plugins = listing(plugin_venv)
    good = plugins["toy"]
    assert good["status"] == "ok" and good["error"] is None
    assert good["distribution"] == "dc-test-good" and good["version"] == "1.2.0"
    assert good["extensions"] == {
        "allocator": ["toy-bump"],
        "memory_level": ["toy-levels"],
        "platform": ["toy"],
        "tiler": ["toy-tiler"],
    }
    assert good["hooks"] == ["register_allocators", "register_memory_levels", "register_platforms", "register_tilers"]


def test_listing_is_sorted_by_name(plugin_venv: Path) -> None:
    names = list(listing(plugin_venv))
    assert names == sorted(names)


def test_each_broken_plugin_is_reported_with_its_reason(plugin_venv: Path) -> None:
    plugins = listing(plugin_venv)
    assert plugins["broken-import"]["status"] == "failed"
    assert "import failed: ModuleNotFoundError" in plugins["broken-import"]["error"]
    assert "dc_test_this_dependency_is_not_installed" in plugins["broken-import"]["error"]
    assert plugins["bad-hookimpl"]["status"] == "failed"
    assert "invalid hook implementation" in plugins["bad-hookimpl"]["error"]
    assert "capacity" in plugins["bad-hookimpl"]["error"]
    assert plugins["raising-hook"]["status"] == "failed"
    assert plugins["raising-hook"]["error"] == "register_allocators raised RuntimeError: allocator table is corrupt"
    assert plugins["unknown-hook"]["status"] == "failed"
    assert "register_alocators" in plugins["unknown-hook"]["error"]


def test_duplicate_allocator_name_goes_to_the_first_distribution(plugin_venv: Path) -> None:
    plugins = listing(plugin_venv)
    assert plugins["dup-a"]["status"] == "ok" and plugins["dup-a"]["extensions"] == {"allocator": ["shared-name"]}
    assert plugins["dup-b"]["status"] == "conflict" and plugins["dup-b"]["extensions"] == {}
    assert plugins["dup-b"]["error"] == (
        "allocator 'shared-name' is registered by plugin 'dup-a' (dc-test-dup-a 1.0.0) and by plugin 'dup-b' "
        "(dc-test-dup-b 2.0.0): the registration of 'dup-a' is used, the one of 'dup-b' is ignored; "
        "--disable-plugin dup-a selects the other")
    chosen = listing(plugin_venv, "--disable-plugin", "dup-a")
    assert chosen["dup-b"]["status"] == "ok" and chosen["dup-b"]["extensions"] == {"allocator": ["shared-name"]}


def test_host_keeps_working_next_to_broken_plugins(plugin_venv: Path) -> None:
    result = run_cli(plugin_venv, "plugins")
    assert result.returncode == 0, result.stderr
    for name in ("toy", "broken-import", "bad-hookimpl", "raising-hook", "dup-a", "dup-b", "unknown-hook",
                 "slow-import", "no-register-arg", "bad-descriptor", "returns-value", "bad-factories", "shadow"):
        assert name in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_allow_list_environment_variable(plugin_venv: Path) -> None:
    plugins = listing(plugin_venv, allow_list="toy,dc-test-dup-a")
    assert plugins["toy"]["status"] == "ok"
    assert plugins["dup-a"]["status"] == "ok"
    assert plugins["dup-b"] == {**plugins["dup-b"], "status": "disabled", "error": "not listed in DEEPLOY_CORE_PLUGINS"}
    assert plugins["broken-import"]["status"] == "disabled"


def test_empty_allow_list_loads_no_plugin(plugin_venv: Path) -> None:
    plugins = listing(plugin_venv, allow_list="")
    assert {entry["status"] for entry in plugins.values()} == {"disabled"}


def test_no_plugins_switch(plugin_venv: Path) -> None:
    plugins = listing(plugin_venv, "--no-plugins")
    assert {entry["error"] for entry in plugins.values()} == {"disabled by --no-plugins"}
    everything = json.loads(run_cli(plugin_venv, "--no-plugins", "plugins", "--json", "--all").stdout)
    builtin = [entry for entry in everything if entry["builtin"]]
    assert builtin and all(entry["status"] == "ok" for entry in builtin), "built-ins stay with --no-plugins"


def test_disable_plugin_switch(plugin_venv: Path) -> None:
    plugins = listing(plugin_venv, "--disable-plugin", "dup-b", "--disable-plugin", "dc-test-raising-hook")
    assert plugins["dup-b"]["status"] == "disabled" and plugins["dup-b"]["error"] == "disabled by --disable-plugin"
    assert plugins["raising-hook"]["status"] == "disabled"
    assert plugins["dup-a"]["status"] == "ok"
    assert plugins["toy"]["status"] == "ok"


def test_disable_unknown_plugin_warns(plugin_venv: Path) -> None:
    result = run_cli(plugin_venv, "--disable-plugin", "no-such-plugin", "plugins", "--json")
    assert result.returncode == 0
    assert "warning: --disable-plugin no-such-plugin: no plugin of that name is installed" in result.stderr


def test_trace_plugins_switch(plugin_venv: Path) -> None:
    quiet = run_cli(plugin_venv, "plugins", "--json")
    traced = run_cli(plugin_venv, "--trace-plugins", "plugins", "--json")
    assert quiet.stderr == ""
    assert "[deeploy_core] loading plugin toy from dc_test_good.plugin" in traced.stderr
    assert "register_platforms" in traced.stderr and "finish" in traced.stderr
    assert without_timing(json.loads(traced.stdout)) == without_timing(json.loads(quiet.stdout)), \
        "tracing goes to stderr only"


def without_timing(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A listing without ``load_seconds``, the one field that differs between runs."""
    return [{key: value for key, value in entry.items() if key != "load_seconds"} for entry in entries]


def test_every_entry_has_a_load_time(plugin_venv: Path) -> None:
    entries = json.loads(run_cli(plugin_venv, "plugins", "--json", "--all").stdout)
    for entry in entries:
        seconds = entry["load_seconds"]
        assert isinstance(seconds, float) and seconds >= 0 and round(seconds, 3) == seconds
        if entry["status"] == "disabled":
            assert seconds == 0.0


def test_slow_plugin_works_is_timed_and_named_once(plugin_venv: Path) -> None:
    result = run_cli(plugin_venv, "plugins", "--json", slow_seconds="0.2")
    assert result.returncode == 0 and "Traceback" not in result.stderr
    slow = {entry["name"]: entry for entry in json.loads(result.stdout)}["slow-import"]
    assert slow["status"] == "ok" and slow["extensions"] == {"allocator": ["slow-first-fit"]}
    assert slow["load_seconds"] >= 0.3
    warnings = [line for line in result.stderr.splitlines() if "'slow-import'" in line]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith("warning: plugin 'slow-import' (dc-test-slow-import 0.1.0) took ")
    assert "threshold 0.2 s, set by DEEPLOY_CORE_SLOW_PLUGIN_SECONDS" in warnings[0]


def test_slow_plugin_is_not_named_under_the_default_threshold(plugin_venv: Path) -> None:
    result = run_cli(plugin_venv, "plugins", slow_seconds=None)
    assert result.returncode == 0 and "slow-import" in result.stdout
    assert "'slow-import'" not in result.stderr, "0.3 s is below the default threshold of 1 s"


def test_bad_slow_threshold_is_one_line(plugin_venv: Path) -> None:
    result = run_cli(plugin_venv, "plugins", slow_seconds="soon")
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: DEEPLOY_CORE_SLOW_PLUGIN_SECONDS='soon': expected a number of seconds "
                                     ">= 0 (or 'inf')")


def test_plugins_misusing_the_registry_api_are_reported(plugin_venv: Path) -> None:
    plugins = listing(plugin_venv)
    for name in ("no-register-arg", "bad-descriptor", "returns-value", "bad-factories"):
        assert plugins[name]["distribution"] == "dc-test-misuse" and plugins[name]["version"] == "0.3.0"
    assert plugins["no-register-arg"]["status"] == "failed"
    assert plugins["no-register-arg"]["error"].startswith("register_allocators lacks the 'register' argument")
    assert plugins["bad-descriptor"]["error"] == (
        "register_allocators raised TypeError: AllocatorExtension.__init__() missing 1 required keyword-only "
        "argument: 'factory'")
    assert plugins["returns-value"]["error"] == (
        "register_allocators returned list; registry hooks call register() and return None")
    assert plugins["bad-factories"]["status"] == "ok", "wrong factories are found only when used"
    assert plugins["bad-factories"]["extensions"] == {"allocator": ["crashing", "string-offsets"],
                                                      "platform": ["none-platform"]}


@pytest.mark.parametrize(
    ("switches", "message"),
    [
        (("--platform", "none-platform"),
         "failed creating platform 'none-platform': TypeError: returned NoneType, expected a Deployer"),
        (("--allocator", "string-offsets"),
         "failed solving with allocator 'string-offsets': TypeError: solve() returned dict, "
         "expected an AllocationSolution"),
        (("--allocator", "crashing"),
         "failed solving with allocator 'crashing': ZeroDivisionError: division by zero in the allocator"),
    ],
    ids=["platform-makes-none", "allocator-answers-a-dict", "allocator-raises"],
)
def test_a_factory_making_the_wrong_thing_is_one_line_exit_2(
    plugin_venv: Path, tmp_path: Path, switches: tuple[str, ...], message: str
) -> None:
    if "--allocator" in switches:
        pytest.importorskip("deeploy_generic_c", reason="the default platform (plugins/generic_c) is not installed")
    model = tmp_path / "mlp.onnx"
    onnx.save(CONFORMANCE_MODELS["mlp"](), model)
    # The duplicate names of dup-b and shadow would add warnings to stderr; they are tested on their own.
    result = run_cli(plugin_venv, "--disable-plugin", "dup-b", "--disable-plugin", "shadow", "compile", str(model),
                     "-o", str(tmp_path / "out"), *switches)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == f"error: plugin 'bad-factories' (dc-test-misuse 0.3.0) {message}"
    assert not (tmp_path / "out").exists(), "nothing is written when compilation fails"


# -- a plugin registering names that are taken: the first registration wins ------------------------


def test_shadowing_plugin_is_a_conflict_naming_both_plugins(plugin_venv: Path) -> None:
    plugins = listing(plugin_venv)
    shadow = plugins["shadow"]
    assert shadow["status"] == "conflict" and shadow["distribution"] == "zz-dc-test-shadow"
    assert shadow["extensions"] == {"allocator": ["shadow-bump"]}, "only the name it won is listed as provided"
    reasons = shadow["error"].split("; also ")
    assert [reason.split(" is registered")[0] for reason in reasons] == [
        "platform 'generic-c'", "tiler 'single-buffering'", "allocator 'first-fit'"]
    assert ("by plugin 'generic-c' (deeploy-generic-c " in reasons[0]
            and "and by plugin 'shadow' (zz-dc-test-shadow 0.5.0)" in reasons[0]
            and reasons[0].endswith("the registration of 'generic-c' is used, the one of 'shadow' is ignored; "
                                    "--disable-plugin generic-c selects the other"))
    for reason in reasons[1:]:
        assert "by plugin 'deeploy_core.builtin' (deeploy-core " in reason
        assert reason.endswith("--disable-plugin deeploy_core.builtin selects the other")
    assert plugins["generic-c"]["status"] == "ok" and plugins["generic-c"]["error"] is None
    table = run_cli(plugin_venv, "plugins")
    assert table.returncode == 0 and table.stderr == "", "the listing reports conflicts in the table, not as warnings"
    assert "conflict: platform 'generic-c' is registered by" in " ".join(table.stdout.split())


def compile_mlp(
    python: Path, folder: Path, *switches: str, disabled: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[str], dict[str, bytes]]:
    """Compile the conformance MLP into ``folder`` (plugins ``disabled``); the result and every file written but
    timings.json (wall-clock seconds).  ``--quiet``: stderr holds warnings and errors only."""
    pytest.importorskip("deeploy_generic_c", reason="the generic C plugin (plugins/generic_c) is not installed")
    model = folder.parent / "mlp.onnx"
    if not model.exists():
        onnx.save(CONFORMANCE_MODELS["mlp"](), model)
    disabling = [argument for name in disabled for argument in ("--disable-plugin", name)]
    result = run_cli(python, *disabling, "compile", str(model), "-o", str(folder), "--quiet", *switches)
    assert result.returncode == 0, result.stderr
    return result, {path.name: path.read_bytes() for path in sorted(folder.iterdir())
                    if path.is_file() and path.name != "timings.json"}


@pytest.mark.parametrize("tiled", [False, True], ids=["untiled", "tiled"])
def test_shadowed_names_keep_the_original_extensions(plugin_venv: Path, tmp_path: Path, tiled: bool) -> None:
    tiling = ("--l1", "8000") if tiled else ()
    # dup-b's duplicate allocator would be warned about too (the compile uses allocators): left out here.
    result, files = compile_mlp(plugin_venv, tmp_path / "with-shadow", *tiling, disabled=("dup-b",))
    clean, reference = compile_mlp(plugin_venv, tmp_path / "without", *tiling, disabled=("dup-b", "shadow"))
    assert clean.stderr == ""
    assert files["Network.c"] == reference["Network.c"] and files == reference, "the shadow's registrations are unused"
    warnings = result.stderr.splitlines()
    assert all(line.startswith("warning: ") for line in warnings), result.stderr
    used = ["platform 'generic-c'", "allocator 'first-fit'"] + (["tiler 'single-buffering'"] if tiled else [])
    for subject in used:
        lines = [line for line in warnings if line.startswith(f"warning: {subject} is registered by plugin ")]
        assert len(lines) == 1, result.stderr
        assert "and by plugin 'shadow' (zz-dc-test-shadow 0.5.0)" in lines[0]
        assert "the one of 'shadow' is ignored; --disable-plugin " in lines[0]
    assert len(warnings) == len(used), "one line per duplicate of a kind the compile used, nothing else"


def test_the_shadow_plugins_own_allocator_works(plugin_venv: Path, tmp_path: Path) -> None:
    pytest.importorskip("deeploy_generic_c", reason="the generic C plugin (plugins/generic_c) is not installed")
    model = tmp_path / "mlp.onnx"
    onnx.save(CONFORMANCE_MODELS["mlp"](), model)
    result = run_cli(plugin_venv, "validate", str(model), "--allocator", "shadow-bump")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("warning: platform 'generic-c'")]) == 1
    _, bumped = compile_mlp(plugin_venv, tmp_path / "bump", "--allocator", "shadow-bump")
    _, packed = compile_mlp(plugin_venv, tmp_path / "first-fit")
    bump_memory = json.loads(bumped["report.json"])["memory"]
    assert bump_memory["allocator"] == "shadow-bump"
    assert bump_memory["arena_bytes"] > json.loads(packed["report.json"])["memory"]["arena_bytes"], "no reuse"


# -- an installed code-transformation plugin is opt-in ----------------------------------------------

MARKS = "layer-marks"
"""tests/plugin_packages/layer_marks: code transformations dc-mark-a, dc-mark-b (any platform), dc-cluster-only."""


@pytest.mark.parametrize("tiled", [False, True], ids=["untiled", "tiled"])
def test_an_installed_code_transformation_changes_nothing_until_selected(plugin_venv: Path, tmp_path: Path,
                                                                         tiled: bool) -> None:
    pytest.importorskip("deeploy_generic_c", reason="the generic C plugin (plugins/generic_c) is not installed")
    tiling = ("--l1", "8000") if tiled else ()
    installed, files = compile_mlp(plugin_venv, tmp_path / "installed", *tiling, disabled=("dup-b", "shadow"))
    _, reference = compile_mlp(plugin_venv, tmp_path / "without", *tiling, disabled=("dup-b", "shadow", MARKS))
    assert installed.stderr == "" and files == reference, "loaded but not selected, the plugin changes no byte"
    assert listing(plugin_venv)[MARKS]["extensions"] == {
        "code_transformation": ["dc-cluster-only", "dc-mark-a", "dc-mark-b"]}

    _, selected = compile_mlp(plugin_venv, tmp_path / "selected", *tiling, "--code-transformation", "dc-mark-b",
                              "--code-transformation", "dc-mark-a", disabled=("dup-b", "shadow"))
    report = json.loads(selected["report.json"])
    tiled_layers = {layer["layer"] for layer in report.get("tiling", {}).get("layers", [])}
    assert bool(tiled_layers) == tiled
    for layer in report["layers"]:
        first = ["tiling"] if layer["node"] in tiled_layers else []
        assert layer["code_transformations"] == [*first, "memory-passthrough", "dc-mark-b", "dc-mark-a", "closure"]
    network = selected["Network.c"].decode()
    assert network.index("/* dc-mark-b */") < network.index("/* dc-mark-a */")


def test_a_selected_code_transformation_validates_and_a_wrong_one_is_one_line(plugin_venv: Path,
                                                                              tmp_path: Path) -> None:
    pytest.importorskip("deeploy_generic_c", reason="the generic C plugin (plugins/generic_c) is not installed")
    model = tmp_path / "mlp.onnx"
    onnx.save(CONFORMANCE_MODELS["mlp"](), model)
    quiet = ("--disable-plugin", "dup-b", "--disable-plugin", "shadow")
    built = run_cli(plugin_venv, *quiet, "validate", str(model), "--code-transformation", "dc-mark-a")
    assert built.returncode == 0, built.stdout + built.stderr
    for name, problem in (("dc-mark-c", "but no installed plugin registers a code transformation of that name "
                                        "(available: dc-cluster-only, dc-mark-a, dc-mark-b)"),
                          ("dc-cluster-only", "but it does not support platform 'generic-c' (supports: pulp-cluster)")):
        refused = run_cli(plugin_venv, *quiet, "compile", str(model), "-o", str(tmp_path / name),
                          "--code-transformation", name)
        assert refused.returncode == 2
        assert refused.stderr.strip() == f"error: --code-transformation {name}, {problem}"
        assert not (tmp_path / name).exists()


# -- a plugin-declared option, end to end --------------------------------------------------------------


def test_a_plugin_declared_option_is_listed_checked_used_and_recorded(plugin_venv: Path, tmp_path: Path) -> None:
    """layer-marks' transformations declare ``label``: --help and plugins --json list it, --option sets it (the
    comment in Network.c changes), report.json records it, and a wrong use is one line."""
    pytest.importorskip("deeploy_generic_c", reason="the generic C plugin (plugins/generic_c) is not installed")
    quiet = ("dup-b", "shadow")
    label = {"name": "label", "type": "str", "default": "dc-mark-a", "help": "the comment this mark adds to every layer",
             "choices": None, "minimum": None, "maximum": None}
    assert listing(plugin_venv)[MARKS]["options"]["code_transformation"]["dc-mark-a"] == [label]
    helped = run_cli(plugin_venv, "--disable-plugin", "dup-b", "compile", "--help")
    assert helped.returncode == 0, helped.stderr
    section = helped.stdout.split("Extension options")[1]
    assert "code transformation 'dc-mark-a':" in section and "label=STR" in section
    assert "the comment this mark adds to every layer (default dc-mark-a)" in " ".join(section.split())

    _, plain = compile_mlp(plugin_venv, tmp_path / "plain", "--code-transformation", "dc-mark-a", disabled=quiet)
    _, labelled = compile_mlp(plugin_venv, tmp_path / "labelled", "--code-transformation", "dc-mark-a",
                              "--option", "label=marked-by-option", disabled=quiet)
    assert "/* dc-mark-a */" in plain["Network.c"].decode() and b"marked-by-option" not in plain["Network.c"]
    network = labelled["Network.c"].decode()
    assert "/* marked-by-option */" in network and "/* dc-mark-a */" not in network
    for files, value in ((plain, "dc-mark-a"), (labelled, "marked-by-option")):
        assert json.loads(files["report.json"])["options"]["code_transformation"] == [
            {"name": "dc-mark-a", "values": {"label": value}}]

    _, both = compile_mlp(plugin_venv, tmp_path / "both", "--code-transformation", "dc-mark-a",
                          "--code-transformation", "dc-mark-b", "--option", "dc-mark-b.label=second", disabled=quiet)
    assert [entry["values"]["label"] for entry in json.loads(both["report.json"])["options"]["code_transformation"]] \
        == ["dc-mark-a", "second"]
    model = tmp_path / "mlp.onnx"
    disabling = ("--disable-plugin", "dup-b", "--disable-plugin", "shadow")
    for switches, message in (
        (("--code-transformation", "dc-mark-a", "--code-transformation", "dc-mark-b", "--option", "label=x"),
         "error: --option label=x: code transformation 'dc-mark-a' and code transformation 'dc-mark-b' both take an "
         "option 'label'; say which with a qualifier, e.g. --option dc-mark-a.label=x"),
        (("--option", "label=x"),
         "error: --option label=x: no selected extension takes an option 'label' (the selected ones take: platform "
         "'generic-c': no options; allocator 'first-fit': no options); 'label' is an option of code transformation "
         "'dc-cluster-only' (select it with --code-transformation dc-cluster-only), code transformation 'dc-mark-a' "
         "(select it with --code-transformation dc-mark-a), code transformation 'dc-mark-b' (select it with "
         "--code-transformation dc-mark-b), which are not selected"),
    ):
        refused = run_cli(plugin_venv, *disabling, "compile", str(model), "-o", str(tmp_path / "refused"), *switches)
        assert refused.returncode == 2 and refused.stderr.strip() == message, refused.stderr
        assert not (tmp_path / "refused").exists()
