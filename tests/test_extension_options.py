"""Typed options per extension: declaring, resolving against the selection, and reaching the factories.

The schema (:class:`OptionSpec`) and the resolution are checked on their
own; the composition tests use small in-process plugins whose factories
record what they receive, and compile real networks through generic C so
that the values are seen where they act (the tiler's strategy, the memory
level's sizes, an allocator's seed) and in report.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import onnx
import pytest
from click.testing import CliRunner

from deeploy_core import AllocatorExtension, OperatorExtension, PlatformExtension, hookimpl
from deeploy_core.allocation import FirstFitAllocator
from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.builtin.plugin import SINGLE_BUFFERING
from deeploy_core.cli import cli
from deeploy_core.compilation import CompileSettings
from deeploy_core.errors import DeeployError
from deeploy_core.extensions import MemoryLevelExtension, TilerExtension
from deeploy_core.options import OptionSpec, level_size_options
from deeploy_core.options.assignments import OptionAssignment, mapping_assignments, parse_option_text
from deeploy_core.options.resolution import SelectedExtension, resolve_options
from deeploy_core.options.resolved import ExtensionOptions, ExtensionValues
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.models import CONFORMANCE_MODELS
from tests.support.option_models import two_branch_mlp

# -- the schema --------------------------------------------------------------------------------------------------


def test_a_spec_converts_text_and_python_values_to_its_type() -> None:
    cores = OptionSpec("cores", int, 8, minimum=1, maximum=16, help="cores")
    assert cores.convert("4") == 4 and cores.convert(4) == 4
    ratio = OptionSpec("ratio", float, 0.5, minimum=0, help="a ratio")
    assert ratio.convert("0.25") == 0.25 and ratio.convert(1) == 1.0 and isinstance(ratio.convert(1), float)
    flag = OptionSpec("verbose", bool, False, help="talk")
    assert [flag.convert(text) for text in ("true", "No", "on", "0")] == [True, False, True, False]
    mode = OptionSpec("mode", str, "a", choices=("a", "b"), help="mode")
    assert mode.convert("b") == "b"


@pytest.mark.parametrize(("spec", "value", "expected"), [
    (OptionSpec("cores", int, 8, minimum=1, maximum=16, help=""), "17", "an integer from 1 to 16"),
    (OptionSpec("cores", int, 8, minimum=1, maximum=16, help=""), "2.5", "an integer from 1 to 16"),
    (OptionSpec("cores", int, 8, minimum=1, help=""), True, "an integer of at least 1"),
    (OptionSpec("ratio", float, 1.0, maximum=2, help=""), "inf", "a number of at most 2"),
    (OptionSpec("ratio", float, 1.0, help=""), "nan", "a number"),
    (OptionSpec("verbose", bool, False, help=""), "maybe", "true or false"),
    (OptionSpec("mode", str, "a", choices=("a", "b"), help=""), "c", "one of a, b"),
    (OptionSpec("name", str, "x", help=""), 3, "a string"),
])
def test_a_value_the_spec_does_not_admit_says_what_it_expects(spec: OptionSpec, value: object,
                                                             expected: str) -> None:
    with pytest.raises(ValueError, match=f"^{expected}$"):
        spec.convert(value)


@pytest.mark.parametrize(("make", "problem"), [
    (lambda: OptionSpec("Cores", int, 1, help=""), "option name 'Cores' is invalid"),
    (lambda: OptionSpec("with.dot", int, 1, help=""), "option name 'with.dot' is invalid"),
    (lambda: OptionSpec("size", list, None, help=""), "type must be int, float, str or bool"),
    (lambda: OptionSpec("cores", int, 0, minimum=1, help=""), "default 0 is not an integer of at least 1"),
    (lambda: OptionSpec("mode", str, "c", choices=("a", "b"), help=""), "default 'c' is not one of a, b"),
    (lambda: OptionSpec("mode", str, "a", minimum=1, help=""), "only int and float options take a minimum"),
    (lambda: OptionSpec("n", int, 5, minimum=9, maximum=3, help=""), "minimum 9 exceeds maximum 3"),
])
def test_a_malformed_declaration_fails_when_it_is_made(make: Any, problem: str) -> None:
    with pytest.raises((TypeError, ValueError), match=problem):
        make()


def test_descriptors_check_their_options_and_operators_take_none() -> None:
    seed = OptionSpec("seed", int, 0, help="seed")
    made = AllocatorExtension(name="seeded", factory=FirstFitAllocator, options=[seed])  # type: ignore[arg-type]
    assert made.options == (seed,)
    with pytest.raises(ValueError, match="allocator 'twice': option 'seed' is declared twice"):
        AllocatorExtension(name="twice", factory=FirstFitAllocator, options=(seed, seed))
    with pytest.raises(TypeError, match="options must be a tuple of OptionSpec"):
        AllocatorExtension(name="loose", factory=FirstFitAllocator, options=({"name": "seed"},))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="operators take no options"):
        OperatorExtension(name="op", factory=object, platform="generic-c", op_type="Relu", options=(seed,))


def test_level_size_options_are_named_after_their_levels_and_unset_by_default() -> None:
    specs = level_size_options((("L2", None), ("TCDM", 4096)))
    assert [(spec.name, spec.type, spec.default, spec.minimum) for spec in specs] == [
        ("l2", int, None, 1), ("tcdm", int, None, 1)]
    assert "(4096 B)" in specs[1].help and "(unbounded)" in specs[0].help


# -- resolution ----------------------------------------------------------------------------------------------------

SEED = OptionSpec("seed", int, 0, minimum=0, help="seed")
STRATEGY = OptionSpec("strategy", str, "max", choices=("max", "min"), help="objective")


def extension(kind_class: type, name: str, *options: OptionSpec, **fields: Any) -> Any:
    return kind_class(name=name, factory=object, options=options, **fields)


PLATFORM = SelectedExtension("platform", extension(PlatformExtension, "cluster",
                                                   OptionSpec("cores", int, 8, minimum=1, maximum=16, help="cores")))
TILER = SelectedExtension("tiler", extension(TilerExtension, "tiles", STRATEGY, SEED))
ALLOCATOR = SelectedExtension("allocator", extension(AllocatorExtension, "shuffle", SEED))
QUIET = SelectedExtension("allocator", extension(AllocatorExtension, "plain"))


def given(*texts: str) -> list[OptionAssignment]:
    return [parse_option_text(text) for text in texts]


def test_defaults_fill_what_is_not_given_and_every_selected_extension_is_recorded() -> None:
    resolved = resolve_options([PLATFORM, QUIET], given("cores=4"))
    assert resolved["platform"].values == {"cores": 4}
    assert resolved["allocator"] == ExtensionValues("allocator", "plain", {})
    assert resolved.to_report() == {"allocator": {"name": "plain", "values": {}},
                                    "platform": {"name": "cluster", "values": {"cores": 4}}}
    assert resolve_options([PLATFORM], [])["platform"]["cores"] == 8


@pytest.mark.parametrize("text", ["allocator.seed=3", "shuffle.seed=3"])
def test_a_qualifier_names_the_kind_or_the_extension(text: str) -> None:
    resolved = resolve_options([PLATFORM, TILER, ALLOCATOR], given(text))
    assert resolved["allocator"]["seed"] == 3 and resolved["tiler"]["seed"] == 0


def test_the_kinds_hyphenated_spelling_is_a_qualifier_too() -> None:
    level = SelectedExtension("memory_level", extension(MemoryLevelExtension, "levels",
                                                        *level_size_options((("L1", 64),))))
    resolved = resolve_options([PLATFORM, level], given("memory-level.l1=32"))
    assert resolved["memory_level"]["l1"] == 32


def test_a_name_two_selected_extensions_declare_asks_for_a_qualifier() -> None:
    with pytest.raises(DeeployError, match=r"^--option seed=3: tiler 'tiles' and allocator 'shuffle' both take an "
                                           r"option 'seed'; say which with a qualifier, e.g. --option tiler.seed=3$"):
        resolve_options([PLATFORM, TILER, ALLOCATOR], given("seed=3"))


def test_an_unknown_name_lists_what_the_selection_takes_and_where_else_it_is_declared() -> None:
    with pytest.raises(DeeployError) as caught:
        resolve_options([PLATFORM, QUIET], given("seed=3"), installed=[PLATFORM, QUIET, ALLOCATOR])
    assert str(caught.value) == (
        "--option seed=3: no selected extension takes an option 'seed' (the selected ones take: platform 'cluster': "
        "cores; allocator 'plain': no options); 'seed' is an option of allocator 'shuffle' (select it with "
        "--allocator shuffle), which is not selected")
    with pytest.raises(DeeployError, match=r"^--option shuffle.seed=3: 'shuffle' is not a selected extension "
                                           r"\(selected: platform 'cluster', allocator 'plain'\); allocator 'shuffle' "
                                           r"is installed: select it with --allocator shuffle$"):
        resolve_options([PLATFORM, QUIET], given("shuffle.seed=3"), installed=[ALLOCATOR])
    with pytest.raises(DeeployError, match=r"^--option platform.seed=3: platform 'cluster' takes no option 'seed' "
                                           r"\(it takes: cores\)$"):
        resolve_options([PLATFORM, QUIET], given("platform.seed=3"))


@pytest.mark.parametrize(("text", "message"), [
    ("cores=0", "option 'cores' of platform 'cluster' takes an integer from 1 to 16, got 0"),
    ("cores=many", "option 'cores' of platform 'cluster' takes an integer from 1 to 16, got many"),
    ("strategy=fast", "option 'strategy' of tiler 'tiles' takes one of max, min, got fast"),
])
def test_a_wrong_value_names_the_option_the_extension_and_what_it_takes(text: str, message: str) -> None:
    with pytest.raises(DeeployError, match=f"^--option {text}: {message}$"):
        resolve_options([PLATFORM, TILER, QUIET], given(text))


def test_one_option_given_twice_is_refused() -> None:
    with pytest.raises(DeeployError, match=r"^--option platform.cores=2: option 'cores' of platform 'cluster' is "
                                           r"already set by --option cores=4; give it once$"):
        resolve_options([PLATFORM], given("cores=4", "platform.cores=2"))


def test_a_partial_resolution_skips_what_it_cannot_place_yet() -> None:
    resolved = resolve_options([PLATFORM], given("cores=2", "label=x", "mark.label=y"), partial=True)
    assert resolved["platform"]["cores"] == 2
    with pytest.raises(DeeployError, match="no selected extension takes an option 'label'"):
        resolve_options([PLATFORM], given("cores=2", "label=x"))


def test_malformed_option_text_is_one_line_with_the_syntax() -> None:
    for text in ("cores", "=3", ".cores=3"):
        with pytest.raises(DeeployError, match=r"expected NAME=VALUE, KIND.NAME=VALUE or EXTENSION.NAME=VALUE"):
            parse_option_text(text)
    assert parse_option_text("tetris-random.seed=3") == OptionAssignment("seed", "3", "--option tetris-random.seed=3",
                                                                          "tetris-random")
    assert [a.target for a in mapping_assignments({"cores": 8, "allocator.seed": 1})] == ["cores", "allocator.seed"]


def test_the_resolved_mapping_answers_by_kind_and_by_name() -> None:
    options = ExtensionOptions((ExtensionValues("platform", "p", {"b": 2, "a": 1}),
                                ExtensionValues("code_transformation", "m1", {"label": "x"}),
                                ExtensionValues("code_transformation", "m2", {})))
    assert list(options["platform"].values) == ["a", "b"], "values are kept sorted"
    assert options.get("code_transformation", "m1") is not None and options.values_of("tiler", "t") == {}
    with pytest.raises(KeyError):
        options["code_transformation"]
    with pytest.raises(KeyError):
        options["tiler"]
    assert options.to_report()["code_transformation"] == [{"name": "m1", "values": {"label": "x"}},
                                                          {"name": "m2", "values": {}}]


# -- composition: the values reach the factories -------------------------------------------------------------------


class Recorder:
    """A plugin whose platform and allocator declare options and record what their factories receive."""

    def __init__(self) -> None:
        self.received: dict[str, dict[str, Any]] = {}

    @hookimpl
    def register_platforms(self, register):
        from deeploy_generic_c.plugin import make_deployer

        def factory(settings: CompileSettings, unroll: int = 1) -> Any:
            self.received["platform"] = {"unroll": unroll, "settings": settings}
            return make_deployer(settings)

        register(PlatformExtension(name="recorded-c", factory=factory,
                                   options=(OptionSpec("unroll", int, 1, minimum=1, help="unrolling"),)))

    @hookimpl
    def register_allocators(self, register):
        def factory(padding: int = 0, verbose: bool = False) -> FirstFitAllocator:
            self.received["allocator"] = {"padding": padding, "verbose": verbose}
            return FirstFitAllocator()

        register(AllocatorExtension(name="recorded-fit", factory=factory, options=(
            OptionSpec("padding", int, 0, minimum=0, help="bytes"), OptionSpec("verbose", bool, False, help="talk"))))


class PlatformNamingAnOptionLikeASetting:
    """A platform whose own option is called like one of the core's settings (``quantization``)."""

    def __init__(self) -> None:
        self.received: dict[str, Any] = {}

    @hookimpl
    def register_platforms(self, register):
        from deeploy_generic_c.plugin import make_deployer

        def factory(settings: CompileSettings, quantization: str = "none") -> Any:
            self.received = {"settings": settings, "quantization": quantization}
            return make_deployer(settings)

        register(PlatformExtension(name="own-quantization", factory=factory,
                                   options=(OptionSpec("quantization", str, "none", help="the platform's own"),)))


@pytest.fixture()
def recorder() -> tuple[PluginHost, Recorder]:
    generic_c = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C plugin is not installed")
    host = PluginHost()
    host.add_plugin(generic_c, name="generic-c", distribution="deeploy-generic-c")
    plugin = Recorder()
    host.add_plugin(plugin, name="recorder")
    return host, plugin


@pytest.fixture(scope="module")
def mlp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models") / "mlp.onnx"
    onnx.save(CONFORMANCE_MODELS["mlp"](), path)
    return path


def test_each_factory_receives_its_values_and_the_report_records_them(recorder: tuple[PluginHost, Recorder],
                                                                      mlp: Path) -> None:
    host, plugin = recorder
    options = CompileOptions(platform="recorded-c", allocator="recorded-fit",
                             options={"unroll": "4", "allocator.verbose": True})
    deployer, generated = compile_model(mlp, options, host)
    assert plugin.received["platform"]["unroll"] == 4
    settings = plugin.received["platform"]["settings"]
    assert isinstance(settings, CompileSettings) and settings.network_name == "mlp", "one object, not loose keywords"
    assert deployer.compilation.settings is settings
    assert plugin.received["allocator"] == {"padding": 0, "verbose": True}
    assert deployer.compilation.extension_options["platform"]["unroll"] == 4
    assert generated.report["options"] == {"allocator": {"name": "recorded-fit",
                                                         "values": {"padding": 0, "verbose": True}},
                                           "platform": {"name": "recorded-c", "values": {"unroll": 4}}}


def test_the_short_flag_fields_set_the_built_in_extensions_options(recorder: tuple[PluginHost, Recorder],
                                                                  mlp: Path) -> None:
    host, _ = recorder
    options = CompileOptions(platform="generic-c", level_sizes={"L1": 8000}, tiling_strategy="min", fusion="none")
    deployer, generated = compile_model(mlp, options, host)
    assert generated.report["options"]["memory_level"] == {"name": "l2-l1", "values": {"l1": 8000, "l2": None}}
    assert generated.report["options"]["tiler"] == {"name": SINGLE_BUFFERING, "values": {"strategy": "min", "fusion": "none"}}
    assert generated.report["tiling"]["fusion"] == "none" and generated.report["tiling"]["patterns"] == []
    assert generated.report["tiling"]["strategy"] == "min" and generated.report["memory_levels"]["L1"]["capacity"] == 8000
    with pytest.raises(DeeployError, match=r"^--cores 2: platform 'generic-c' has a single core; --cores is for "
                                           r"cluster platforms$"):
        compile_model(mlp, CompileOptions(platform="generic-c", cores=2), host)
    with pytest.raises(DeeployError, match=r"^--tiling-strategy min: tiling is off"):
        compile_model(mlp, CompileOptions(platform="generic-c", tiling_strategy="min"), host)


def test_an_unknown_platform_is_reported_before_any_option(recorder: tuple[PluginHost, Recorder], mlp: Path) -> None:
    host, _ = recorder
    with pytest.raises(DeeployError, match=r"^no platform named 'nope' \(available: generic-c, recorded-c\)$"):
        compile_model(mlp, CompileOptions(platform="nope", cores=4, options={"anything": 1}), host)


def test_a_platform_option_named_like_a_core_setting_is_the_platforms_own(mlp: Path) -> None:
    """The core's settings arrive as one CompileSettings, the platform's options as keywords: names cannot clash."""
    pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C plugin is not installed")
    host = PluginHost()
    plugin = PlatformNamingAnOptionLikeASetting()
    host.add_plugin(plugin, name="own-quantization-plugin")
    _, generated = compile_model(mlp, CompileOptions(platform="own-quantization", options={"quantization": "mine"}),
                                 host)
    assert plugin.received["quantization"] == "mine" and plugin.received["settings"].quantization == "exact"
    assert generated.report["options"]["platform"] == {"name": "own-quantization", "values": {"quantization": "mine"}}


def test_an_allocator_option_changes_the_arena_and_shows_in_report_json(tmp_path: Path) -> None:
    """End to end through the CLI: tetris-random's seed (a bundled plugin's option) moves buffers."""
    pytest.importorskip("deeploy_tetris", reason="the tetris plugin is not installed")
    model = tmp_path / "two_branch.onnx"
    onnx.save(two_branch_mlp(), model)
    reports = []
    for seed in ("1", "2"):
        result = CliRunner().invoke(cli, ["analyze", str(model), "--json", "-q", "--allocator", "tetris-random",
                                          "--option", "tries=1", "--option", f"seed={seed}"],
                                    env={"DEEPLOY_CORE_PLUGINS": "generic-c,tetris"})
        assert result.exit_code == 0, result.output
        reports.append(json.loads(result.stdout))
    assert [r["options"]["allocator"]["values"] for r in reports] == [{"seed": 1, "tries": 1}, {"seed": 2, "tries": 1}]
    assert [b["offset"] for b in reports[0]["memory"]["buffers"]] != [b["offset"] for b in reports[1]["memory"]["buffers"]]


# -- listings ------------------------------------------------------------------------------------------------------


def test_help_lists_installed_options_and_loading_the_cli_loads_no_plugin() -> None:
    code = ("import sys, deeploy_core.cli.app; "
            "print(sorted(m for m in sys.modules if m.startswith(('deeploy_pulp', 'deeploy_generic', 'deeploy_tetris'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]", "the plugin host is built when a command (or --help) needs it, not on import"
    shown = CliRunner().invoke(cli, ["compile", "--help"], env={"DEEPLOY_CORE_PLUGINS": "generic-c,pulp-cluster",
                                                                 "COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    section = shown.stdout.split("Extension options (--option NAME=VALUE):")[1]
    assert "platform 'pulp-cluster':" in section and "cores=INT" in section
    assert "memory level 'l2-l1':" in section and "strategy=max|min|random-max" in section
    none = CliRunner().invoke(cli, ["--no-plugins", "validate", "--help"], env={"DEEPLOY_CORE_PLUGINS": "pulp-cluster"})
    assert "platform 'pulp-cluster'" not in none.stdout and "memory level 'l2-l1':" in none.stdout


def test_plugins_json_lists_each_extensions_options() -> None:
    listed = CliRunner().invoke(cli, ["plugins", "--json", "--all"], env={"DEEPLOY_CORE_PLUGINS": "pulp-cluster"})
    assert listed.exit_code == 0, listed.output
    by_name = {entry["name"]: entry for entry in json.loads(listed.stdout)}
    if "pulp-cluster" not in by_name:
        pytest.skip("the pulp-cluster plugin is not installed")
    assert by_name["pulp-cluster"]["options"]["platform"]["pulp-cluster"] == [
        {"name": "cores", "type": "int", "default": 8, "help": "cores that share every layer's tiles",
         "choices": None, "minimum": 1, "maximum": 16}]
    assert [spec["name"] for spec in by_name["pulp-cluster"]["options"]["memory_level"]["pulp-l3-l2-l1"]] == [
        "l3", "l2", "l1", "l3_buffering"]
    builtin = by_name["deeploy_core.builtin"]["options"]
    assert builtin["allocator"] == {"first-fit": []}
    assert builtin["tiler"]["double-buffering"][0]["choices"] == ["max", "min", "random-max"]
