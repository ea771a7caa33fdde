"""Operator plugins (issue 18, item 5): the descriptor, the precedence rule, conflict notes, supported-ops, results.

Small plugins are defined here and in ``tests/support/toy_operators.py``; their C kernels live in
``operator_plugin_kernels/``.  The precedence tests map real nodes with :func:`map_nodes`; the compile tests build
the generated C with the kernels and run it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.cli.plugins_command import _table
from deeploy_core.extensions import OperatorExtension, OperatorNumerics
from deeploy_core.frontend.importer import import_model
from deeploy_core.hookspecs import hookimpl
from deeploy_core.midend.context_builder import build_context
from deeploy_core.midend.parse import map_nodes
from deeploy_core.platform import Engine, Platform, RuntimeLibrary, network_runtime
from deeploy_core.plugins import PluginHost, PluginStatus
from deeploy_core.plugins.operators import plugin_mappers
from deeploy_core.supported_ops import supported_operators
from deeploy_core.testing import OperatorConformance
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.tiling.constraints import UNTILED, tile_constraint_of
from deeploy_core.tiling.geometry import ChannelParameters, Elementwise, TileConstraint
from deeploy_core.tiling.errors import TilingInfeasibleError
from deeploy_core.validate import Toolchain
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin
from tests.support.toy_operators import KERNELS, SOURCES, OperatorPlugin, bitwise_not_extension, unary_mapper


def relu_extension(name: str, platform: str = "toy", override: bool = False, refuse: bool = False,
                   **fields: Any) -> OperatorExtension:
    return OperatorExtension(name=name, platform=platform, op_type="Relu", override=override,
                             factory=lambda: unary_mapper(name, refuse=refuse), description=f"Relu ({name})", **fields)


def single_node_model(op_type: str, shape: tuple[int, ...], elem_type: int, opset: int = 18) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node(op_type, ["x"], ["y"], name="op")], "single",
                              [helper.make_tensor_value_info("x", elem_type, shape)],
                              [helper.make_tensor_value_info("y", elem_type, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def toy_platform() -> Platform:
    return Platform(name="toy", engines=(Engine("cpu", {"Relu": (unary_mapper("platform relu"),)}),),
                    runtime=RuntimeLibrary(include_dirs=(Path("/platform/include"),),
                                           sources=(Path("/platform/src/a.c"),)))


def mapped_layers(tmp_path: Path, host: PluginHost, platform: Platform) -> list[Any]:
    path = tmp_path / "relu.onnx"
    onnx.save(single_node_model("Relu", (2, 3), TensorProto.FLOAT), path)
    graph = import_model(path).graph
    return map_nodes(graph, build_context(graph), platform, plugin_mappers(host, platform.name))


# -- the descriptor --------------------------------------------------------------------------------------------


def test_a_missing_c_source_fails_the_plugin_in_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "gone.c"

    class Broken:
        @hookimpl
        def register_operators(self, register: Any) -> None:
            register(OperatorExtension(name="gone", platform="generic-c", op_type="Relu", factory=object,
                                       sources=(missing,)))

    host = PluginHost()
    host.add_plugin(Broken(), name="broken")
    record = host.record("broken")
    assert record.status is PluginStatus.FAILED
    assert record.error == (f"register_operators raised ValueError: operator 'gone': sources names '{missing}', "
                            f"which is not an existing file")


def test_descriptor_fields_are_checked_and_normalised() -> None:
    extension = OperatorExtension(name="fused", platform="generic-c", op_type="Fused", domain="com.example",
                                  factory=object, numerics="exact", sources=[str(SOURCES[0])])
    assert extension.op_key == "com.example.Fused"
    assert extension.numerics is OperatorNumerics.EXACT
    assert extension.sources == SOURCES
    assert OperatorExtension(name="m", platform="p", op_type="Mish", domain="ai.onnx", factory=object).op_key == "Mish"
    with pytest.raises(ValueError, match="'fast' is not a valid OperatorNumerics"):
        OperatorExtension(name="m", platform="p", op_type="Mish", factory=object, numerics="fast")
    with pytest.raises(TypeError, match="tile_constraint must be a TileConstraint or a function returning one"):
        OperatorExtension(name="m", platform="p", op_type="Mish", factory=object, tile_constraint="elementwise")
    with pytest.raises(ValueError, match="op_type 'Mish Op' is not an ONNX operator name"):
        OperatorExtension(name="m", platform="p", op_type="Mish Op", factory=object)


# -- precedence ------------------------------------------------------------------------------------------------


def precedence_host() -> PluginHost:
    """Four plugins whose distribution names, not plugin or extension names, give their registration order."""
    host = PluginHost()
    host.add_plugin(OperatorPlugin(relu_extension("late")), name="aaa", distribution="c-dist")
    host.add_plugin(OperatorPlugin(relu_extension("early")), name="zzz", distribution="a-dist")
    host.add_plugin(OperatorPlugin(relu_extension("second", override=True)), name="bbb", distribution="d-dist")
    host.add_plugin(OperatorPlugin(relu_extension("first", override=True)), name="yyy", distribution="b-dist")
    return host


def test_overrides_come_first_then_the_platform_then_additions_in_registration_order() -> None:
    added = plugin_mappers(precedence_host(), "toy")
    platform = [mapper for _, mapper in toy_platform().mappers_for("Relu")]
    assert [mapper.name for mapper in added.around("Relu", platform)] == [
        "first", "second", "platform relu", "early", "late"]
    assert plugin_mappers(precedence_host(), "generic-c").keys() == set()


def test_the_first_mapper_that_accepts_the_node_compiles_it(tmp_path: Path) -> None:
    host = precedence_host()
    assert mapped_layers(tmp_path, host, toy_platform())[0].mapper.name == "first"
    refusing = PluginHost()
    refusing.add_plugin(OperatorPlugin(relu_extension("picky", override=True, refuse=True),
                                       relu_extension("extra")), name="p", distribution="p-dist")
    assert mapped_layers(tmp_path, refusing, toy_platform())[0].mapper.name == "platform relu"
    only_plugin = Platform(name="toy", engines=(Engine("cpu", {}),))
    assert mapped_layers(tmp_path, refusing, only_plugin)[0].mapper.name == "extra"


def test_a_mapper_carries_the_descriptors_tile_constraint_and_c_files(tmp_path: Path) -> None:
    host = PluginHost()
    host.add_plugin(OperatorPlugin(relu_extension("tiled", override=True, tile_constraint=ChannelParameters,
                                                   sources=SOURCES, include_dirs=(KERNELS,))), name="tiled")
    layer = mapped_layers(tmp_path, host, toy_platform())[0]
    assert isinstance(tile_constraint_of(layer, {"Relu": UNTILED}), ChannelParameters)
    runtime = network_runtime(toy_platform().runtime, [layer])
    assert runtime.sources == (Path("/platform/src/a.c"), *SOURCES)
    assert runtime.include_dirs == (Path("/platform/include"), KERNELS)
    plain = mapped_layers(tmp_path, PluginHost(), toy_platform())[0]
    assert network_runtime(toy_platform().runtime, [plain]) == toy_platform().runtime
    assert isinstance(tile_constraint_of(plain), Elementwise), "the core's default for Relu"
    assert tile_constraint_of(plain, {"Relu": UNTILED}) is UNTILED, "the platform's policy before the default"


def test_a_tile_constraint_function_returning_something_else_names_the_plugin(tmp_path: Path) -> None:
    host = PluginHost()
    host.add_plugin(OperatorPlugin(relu_extension("odd", override=True, tile_constraint=lambda: "rows")),
                    name="odd-plugin", distribution="odd-dist", version="1.0")
    with pytest.raises(Exception) as caught:
        mapped_layers(tmp_path, host, toy_platform())
    assert str(caught.value) == ("plugin 'odd-plugin' (odd-dist 1.0) failed creating operator 'odd': TypeError: "
                                 "tile_constraint() returned str, expected a TileConstraint")


# -- conflict notes --------------------------------------------------------------------------------------------


def test_competing_variants_and_overrides_are_noted_on_both_plugins_with_status_ok() -> None:
    host = PluginHost()
    host.add_plugin(OperatorPlugin(relu_extension("relu-a"), relu_extension("relu-a2")), name="a",
                    distribution="a-dist")
    host.add_plugin(OperatorPlugin(relu_extension("relu-b")), name="b", distribution="b-dist")
    host.add_plugin(OperatorPlugin(relu_extension("relu-c", override=True)), name="c", distribution="c-dist")
    host.add_plugin(OperatorPlugin(relu_extension("relu-other", platform="other")), name="d", distribution="d-dist")
    a, b, c, d = (host.record(name) for name in "abcd")
    assert {record.status for record in (a, b, c, d)} == {PluginStatus.OK}
    shadows = ("operator 'relu-{0}' (Relu on toy) shadows operator 'relu-{1}' of plugin '{1}' ({1}-dist), which is "
               "tried only for the nodes this one refuses")
    shadowed = ("operator 'relu-{0}' (Relu on toy) is shadowed by operator 'relu-{1}' of plugin '{1}' ({1}-dist), "
                "which is tried first (--disable-plugin {1} leaves it out)")
    assert c.notes == [
        "operator 'relu-c' (Relu on toy) overrides the platform: it is tried before toy's own mappers for Relu, "
        "which then compile only the nodes it refuses",
        shadows.format("c", "a"), shadows.format("c", "b"),
    ]
    assert a.notes == [shadowed.format("a", "c"), shadows.format("a", "b")], "relu-a2 is a's own alternative"
    assert b.notes == [shadowed.format("b", "c"), shadowed.format("b", "a")]
    assert d.notes == [] and d.to_json()["notes"] == []
    assert c.to_json()["notes"] == c.notes and c.to_json()["error"] is None
    row = next(row for row in _table(host.plugins()).rows if row[0] == "c")
    assert row[-1] == "ok" + "".join(f"; note: {note}" for note in c.notes)
    host.add_plugin(OperatorPlugin(), name="e")  # the registry is rebuilt: notes are found again, not repeated
    assert len(host.record("c").notes) == 3


def test_supported_ops_names_the_plugin_and_whose_variants_are_shadowed() -> None:
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(OperatorPlugin(bitwise_not_extension("generic-c")), name="bitwise", distribution="bitwise")
    host.add_plugin(OperatorPlugin(relu_extension("fast-relu", platform="generic-c", override=True)), name="fast",
                    distribution="fast")
    host.add_plugin(OperatorPlugin(relu_extension("spare-relu", platform="generic-c")), name="spare",
                    distribution="spare")
    rows = supported_operators(host, "generic-c")
    sources = {(row["op"], row["kernel"]): row["source"] for row in rows}
    assert sources[("BitwiseNot", "BitwiseNot int8 (test plugin)")] == "plugin bitwise"
    assert sources[("Relu", "fast-relu")] == "plugin fast (override)"
    assert sources[("Relu", "Relu float32")] == "platform generic-c (shadowed by plugin fast (override))"
    assert sources[("Relu", "spare-relu")] == \
        "plugin spare (shadowed by plugin fast (override), platform generic-c)"
    assert sources[("Add", "Add float32")] == "platform generic-c"


# -- compiled, built and run -----------------------------------------------------------------------------------


class TestBitwiseNotConformance(OperatorConformance):
    """An integer op with exact numerics and an op type the core has no tile constraint for."""

    plugin = OperatorPlugin(bitwise_not_extension("generic-c"), bitwise_not_extension("pulp-cluster"))
    plugin_name = "bitwise-not"
    platform_plugins = ((generic_c_plugin, "generic-c"), (pulp_cluster_plugin, "pulp-cluster"))
    platforms = ("generic-c", "pulp-cluster")
    op_type = "BitwiseNot"
    opset = 18
    input_shapes = ((3, 5, 7, 11),)
    input_types = ("int8",)

    def reference(self, *inputs: np.ndarray) -> np.ndarray:
        return np.invert(inputs[0])


def generic_c_host(*plugins: OperatorPlugin) -> PluginHost:
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    for index, plugin in enumerate(plugins):
        host.add_plugin(plugin, name=f"operators-{index}")
    return host


def test_an_override_replaces_the_platforms_kernel_and_runs(tmp_path: Path) -> None:
    path = tmp_path / "relu.onnx"
    onnx.save(single_node_model("Relu", (4, 33), TensorProto.FLOAT), path)
    x = np.random.default_rng(3).standard_normal((4, 33)).astype(np.float32)
    toolchain = Toolchain.from_environment(extra_flags=strict_flags())
    for override, kernel, call in ((True, "override-relu", "dct_relu_f32("), (False, "Relu float32", "dcg_relu_f32(")):
        host = generic_c_host(OperatorPlugin(relu_extension("override-relu", platform="generic-c", override=override,
                                                            sources=SOURCES, include_dirs=(KERNELS,))))
        generated, result = validate_with_data(path, CompileOptions(platform="generic-c"), host, {"x": x},
                                               toolchain=toolchain, atol=0.0)
        assert [layer["kernel"] for layer in generated.report["layers"]] == [kernel]
        assert call in generated.files["Network.c"]
        assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]


def test_an_op_without_tile_constraint_runs_as_one_whole_tile_or_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bitwise_not.onnx"
    onnx.save(single_node_model("BitwiseNot", (8, 64), TensorProto.INT8), path)
    x = np.random.default_rng(5).integers(-128, 128, size=(8, 64)).astype(np.int8)
    host = generic_c_host(OperatorPlugin(bitwise_not_extension("generic-c", tile_constraint=None)))
    generated, result = validate_with_data(path, CompileOptions(platform="generic-c", level_sizes={"L1": 4096}), host,
                                           {"x": x}, [np.invert(x)], atol=0.0,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok
    assert [layer["tiles"] for layer in generated.report["tiling"]["layers"]] == [1]
    with pytest.raises(TilingInfeasibleError) as caught:
        validate_with_data(path, CompileOptions(platform="generic-c", level_sizes={"L1": 512}), host, {"x": x},
                           [np.invert(x)])
    message = str(caught.value)
    assert "\n" not in message and "layer 'op' (BitwiseNot)" in message and "has 512" in message
    assert caught.value.needed_bytes is not None and caught.value.needed_bytes >= 2 * x.nbytes


def test_a_tile_constraint_function_is_called_only_when_the_op_is_used() -> None:
    """The descriptor's function form is accepted without calling it: registering stays cheap."""
    calls: list[str] = []

    def lazily() -> TileConstraint:
        calls.append("made")
        return Elementwise()

    host = generic_c_host(OperatorPlugin(bitwise_not_extension("generic-c", tile_constraint=lazily)))
    assert host.record("operators-0").status is PluginStatus.OK and calls == []
    assert isinstance(plugin_mappers(host, "generic-c").last["BitwiseNot"][0].tile_constraint, Elementwise)
    assert calls == ["made"]


WRONG_SUITE = '''
import numpy as np
from deeploy_core.testing import OperatorConformance
from deeploy_generic_c import plugin as generic_c
from tests.support.toy_operators import OperatorPlugin, bitwise_not_extension


class TestClaimsTooMuchWithAWrongReference(OperatorConformance):
    plugin = OperatorPlugin(bitwise_not_extension("generic-c"))
    plugin_name = "bitwise-not"
    platform_plugins = ((generic_c, "generic-c"),)
    platforms = ("generic-c", "pulp-cluster")
    op_type = "BitwiseNot"
    opset = 18
    input_shapes = ((4, 9),)
    input_types = ("int8",)

    def reference(self, *inputs):
        return np.invert(inputs[0]) ^ 1
'''


def test_the_suite_catches_a_wrong_claim_and_a_wrong_result(pytester: pytest.Pytester) -> None:
    """A suite over the BitwiseNot plugin (``tests/support/toy_operators.py``, imported as it is) that claims a
    platform the plugin does not register and whose reference is off by one bit: exactly the checks that depend on
    them fail."""
    pytester.makepyfile(test_wrong_suite=WRONG_SUITE)
    selected = "registers or agrees or generic-c-alone-untiled or pulp-cluster-alone-tiled-single"
    result = pytester.runpytest("-p", "no:cacheprovider", "--tb=line", "test_wrong_suite.py", "-k", selected)
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines_random([
        "*registers BitwiseNot for ?'generic-c'?, the test claims ?'generic-c', 'pulp-cluster'?",
        "*reference() output 0 disagrees with ONNX Runtime in 36 of 36 elements (max abs difference 1)",
        "*generic-c-alone-untiled: output y0: 36/36 elements outside atol=0 rtol=0*",
        "*platform 'pulp-cluster' is not registered: add its plugin to platform_plugins*",
    ])
