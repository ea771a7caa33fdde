"""Code transformations are opt-in: installed ones run only when the platform's chain or the user names them.

The plugin under test is ``tests/plugin_packages/layer_marks`` (loaded here
from its source; ``test_installed_plugins`` pip-installs it and drives the
CLI): two transformations at the same point that each add a comment and a
per-layer call counter, and one that only supports the cluster.  Selected
compiles are built with gcc, run and compared with ONNX Runtime.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import onnx
import pytest
from click.testing import CliRunner

from deeploy_core import PlatformExtension, hookimpl
from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.cli import cli
from deeploy_core.errors import DeeployError
from deeploy_core.network import GeneratedNetwork, NetworkDeployer
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.models import CONFORMANCE_MODELS

MARKS_SOURCE = Path(__file__).parent / "plugin_packages" / "layer_marks" / "dc_test_layer_marks" / "plugin.py"
BUILT_IN_CHAIN = ["memory-passthrough", "closure"]


def _marks_plugin() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dc_test_layer_marks_plugin", MARKS_SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class MarkedPlatform:
    """generic C under another name whose chain always includes ``dc-mark-a`` (or what ``chain`` says)."""

    def __init__(self, chain: tuple[str, ...] = ("dc-mark-a",)) -> None:
        self.chain = chain

    @hookimpl
    def register_platforms(self, register):
        from deeploy_generic_c.platform import generic_c_platform

        platform = dataclasses.replace(generic_c_platform(), name="marked-c", code_transformations=self.chain)
        register(PlatformExtension(name="marked-c", factory=lambda settings: NetworkDeployer(platform, settings)))


def make_host(marks: bool, *extra: tuple[object, str]) -> PluginHost:
    generic_c = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C plugin is not installed")
    host = PluginHost()
    host.add_plugin(generic_c, name="generic-c", distribution="deeploy-generic-c")
    if marks:
        host.add_plugin(_marks_plugin(), name="layer-marks", distribution="dc-test-layer-marks", version="0.1.0")
    for plugin, name in extra:
        host.add_plugin(plugin, name=name)
    return host


@pytest.fixture(scope="module")
def runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The platform runtime, built once for the module's validations."""
    return tmp_path_factory.mktemp("runtime")


@pytest.fixture(scope="module")
def cnn_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models") / "cnn.onnx"
    onnx.save(CONFORMANCE_MODELS["cnn"](), path)
    return path


def chains(generated: GeneratedNetwork) -> list[list[str]]:
    return [layer["code_transformations"] for layer in generated.report["layers"]]


def mark_order(network_c: str) -> list[str]:
    """The marks in the order they appear in Network.c."""
    return re.findall(r"/\* (dc-mark-[ab]) \*/", network_c)


def test_an_installed_transformation_changes_nothing_until_selected(cnn_path: Path) -> None:
    for options in (CompileOptions(platform="generic-c"), CompileOptions(platform="generic-c", level_sizes={"L1": 8000})):
        _, without = compile_model(cnn_path, options, make_host(marks=False))
        _, installed = compile_model(cnn_path, options, make_host(marks=True))
        assert installed.files == without.files
        assert json.dumps(installed.report, sort_keys=True) == json.dumps(without.report, sort_keys=True)
        assert all("dc-mark" not in name for chain in chains(installed) for name in chain)


@pytest.mark.parametrize("order", [("dc-mark-a", "dc-mark-b"), ("dc-mark-b", "dc-mark-a")], ids=["a-b", "b-a"])
def test_selected_transformations_run_in_the_order_given_and_are_reported(cnn_path: Path, order: tuple[str, str],
                                                                        runtime_cache: Path) -> None:
    options = CompileOptions(platform="generic-c", code_transformations=order)
    generated, result = validate_model(cnn_path, options, make_host(marks=True), cache_dir=runtime_cache)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    assert chains(generated) == [["memory-passthrough", *order, "closure"]] * len(generated.report["layers"])
    assert mark_order(generated.files["Network.c"]) == list(order) * len(generated.report["layers"])


def test_the_platforms_chain_includes_its_transformations_by_name(cnn_path: Path) -> None:
    host = make_host(True, (MarkedPlatform(), "marked-platform"))
    _, own = compile_model(cnn_path, CompileOptions(platform="marked-c"), host)
    assert set(map(tuple, chains(own))) == {("memory-passthrough", "dc-mark-a", "closure")}
    _, added = compile_model(cnn_path, CompileOptions(platform="marked-c", code_transformations=("dc-mark-b", "dc-mark-a")),
                             host)
    assert set(map(tuple, chains(added))) == {("memory-passthrough", "dc-mark-a", "dc-mark-b", "closure")}, \
        "the platform's names come first; a name given twice runs once"


def test_options_reach_the_transformations_of_the_platforms_chain(cnn_path: Path) -> None:
    """The platform names its chain only once it exists: its transformations' options resolve all the same."""
    host = make_host(True, (MarkedPlatform(), "marked-platform"))
    _, labelled = compile_model(cnn_path, CompileOptions(platform="marked-c", options={"label": "from-the-chain"}), host)
    assert "/* from-the-chain */" in labelled.files["Network.c"] and "/* dc-mark-a */" not in labelled.files["Network.c"]
    assert labelled.report["options"]["code_transformation"] == [{"name": "dc-mark-a",
                                                                  "values": {"label": "from-the-chain"}}]
    _, both = compile_model(cnn_path, CompileOptions(platform="marked-c", code_transformations=("dc-mark-b",),
                                                     options={"dc-mark-b.label": "user-named"}), host)
    assert set(mark_order(both.files["Network.c"])) == {"dc-mark-a"}, "dc-mark-b writes its label instead"
    assert both.files["Network.c"].count("/* user-named */") == both.files["Network.c"].count("/* dc-mark-a */") > 0
    with pytest.raises(DeeployError, match=r"^--option label=x: code transformation 'dc-mark-a' and code "
                                           r"transformation 'dc-mark-b' both take an option 'label'"):
        compile_model(cnn_path, CompileOptions(platform="marked-c", code_transformations=("dc-mark-b",),
                                               options={"label": "x"}), host)


def test_tiled_layers_run_the_tilers_transformation_first(cnn_path: Path, runtime_cache: Path) -> None:
    options = CompileOptions(platform="generic-c", level_sizes={"L1": 8000}, code_transformations=("dc-mark-a",))
    generated, result = validate_model(cnn_path, options, make_host(marks=True), cache_dir=runtime_cache)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    tiled = {layer["layer"] for layer in generated.report["tiling"]["layers"]}
    assert tiled
    for layer in generated.report["layers"]:
        expected = ["memory-passthrough", "dc-mark-a", "closure"]
        assert layer["code_transformations"] == (["tiling", *expected] if layer["node"] in tiled else expected)


def test_an_unknown_name_is_one_line_listing_the_installed_ones(cnn_path: Path) -> None:
    options = CompileOptions(platform="generic-c", code_transformations=("dc-mark-c",))
    with pytest.raises(DeeployError) as caught:
        compile_model(cnn_path, options, make_host(marks=True))
    assert str(caught.value) == ("--code-transformation dc-mark-c, but no installed plugin registers a code "
                                 "transformation of that name (available: dc-cluster-only, dc-mark-a, dc-mark-b)")
    with pytest.raises(DeeployError, match=r"\(available: none\)$"):
        compile_model(cnn_path, options, make_host(marks=False))


def test_a_transformation_for_another_platform_is_refused(cnn_path: Path) -> None:
    options = CompileOptions(platform="generic-c", code_transformations=("dc-cluster-only",))
    with pytest.raises(DeeployError) as caught:
        compile_model(cnn_path, options, make_host(marks=True))
    assert str(caught.value) == ("--code-transformation dc-cluster-only, but it does not support platform "
                                 "'generic-c' (supports: pulp-cluster)")


def test_a_platform_naming_a_missing_transformation_is_refused(cnn_path: Path) -> None:
    host = make_host(True, (MarkedPlatform(("dc-mark-z",)), "marked-platform"))
    with pytest.raises(DeeployError, match=r"^platform 'marked-c' includes code transformation 'dc-mark-z' in its "
                                           r"chain, but no installed plugin registers"):
        compile_model(cnn_path, CompileOptions(platform="marked-c"), host)


def test_the_command_line_refuses_an_unknown_name_in_one_line(cnn_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["compile", str(cnn_path), "-o", str(out), "--code-transformation", "nope"],
                                env={"DEEPLOY_CORE_PLUGINS": "generic-c"})
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == ("error: --code-transformation nope, but no installed plugin registers a code "
                                     "transformation of that name (available: none)")
    assert not out.exists()
