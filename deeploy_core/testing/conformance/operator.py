"""The contract of operator extensions: the op compiles, runs and matches a numpy reference wherever it is claimed.

A plugin author describes the op once — the plugin, the op type, the
platforms, the shapes and element types of its inputs and a numpy function
computing it — and the suite checks, on every claimed platform:

* the plugin loads with status ``ok`` and registers the op for exactly the
  platforms the test names; ``supported-ops`` lists it, from the plugin;
* the reference agrees with ONNX Runtime where ONNX Runtime runs the op (a
  wrong reference would make every other check meaningless);
* a one-node model, and a model where the op sits between other layers, are
  compiled untiled (where the platform allows it) and tiled into a small
  compute level with single and double buffering (on a cluster, with
  ``cores`` cores), built with the system C compiler with warnings as errors,
  run, and compared with the reference: exactly when the extension declares
  ``exact`` numerics or the outputs are integers, else within ``atol`` and
  ``rtol``; an op with a tile constraint must really be cut into several
  tiles;
* ONNX's own backend node cases of the op (default domain) pass;
* the same model and options give the same code.

Example (the whole test module of an operator plugin)::

    import numpy as np
    from deeploy_core.testing import OperatorConformance
    from deeploy_generic_c import plugin as generic_c
    import my_plugin

    class TestMyRelu6(OperatorConformance):
        plugin = my_plugin
        plugin_name = "relu6"
        platform_plugins = ((generic_c, "generic-c"),)
        platforms = ("generic-c",)
        op_type = "Relu6"
        domain = "com.example"
        input_shapes = ((2, 3, 8, 8),)

        @staticmethod
        def reference(x):
            return np.clip(x, 0, 6)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import onnx
import pytest
from onnx import helper

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.errors import DeeployError
from deeploy_core.extensions import OperatorExtension, OperatorNumerics, PlatformExtension
from deeploy_core.plugins import PluginHost, PluginStatus
from deeploy_core.supported_ops import supported_operators
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.testing.loading import PluginLoadFailed, load_plugin_under_test
from deeploy_core.testing.node_cases import float32_node_cases
from deeploy_core.tiling.constraints import DEFAULT_TILE_CONSTRAINTS
from deeploy_core.tiling.errors import TilingInfeasibleError
from deeploy_core.validate import Toolchain
from deeploy_core.validate.reference import run_reference

LAYOUTS = ("alone", "between")
"""The op as the only node, and between two pairs of Transpose layers (its tensors then live in the arena)."""

CONFIGURATIONS = ("untiled", "tiled-single", "tiled-double")


@dataclass(frozen=True)
class OperatorCase:
    """One compile of the op: platform, model layout and tiling configuration."""

    platform: str
    layout: str
    configuration: str

    @property
    def id(self) -> str:
        return f"{self.platform}-{self.layout}-{self.configuration}"


class OperatorConformance:
    """Subclass with the op's description; every attribute below without a default must be set.

    ``plugin``/``plugin_name``
        The operator plugin (module or object) and the entry-point name it is
        published under.
    ``platform_plugins``
        ``(module, name)`` of the plugins registering the platforms the op is
        for, loaded into the same isolated host.
    ``platforms``
        The platforms the op is claimed for (must equal what the plugin registers).
    ``op_type``/``domain``/``opset``/``attributes``
        The node: ONNX op type, domain (``""`` for the default one), the
        default-domain opset of the test models and the node's attributes.
    ``input_shapes``/``input_types``
        One shape per input and its numpy element type (float32 when not
        given); ``output_types`` likewise for the outputs (the first input's
        type when not given).
    ``reference(*inputs)``
        The numpy reference: the op's output (or a tuple of outputs).
    ``make_inputs(rng)``
        The test data (override for ops whose interesting range is special).
    ``atol``/``rtol``
        The tolerance for float outputs, unless the extension declares ``exact``.
    ``cores``
        How many cores a cluster platform compiles the op for.
    """

    plugin: ClassVar[Any] = None
    plugin_name: ClassVar[str] = "operator-under-test"
    platform_plugins: ClassVar[tuple[tuple[Any, str], ...]] = ()
    platforms: ClassVar[tuple[str, ...]] = ()
    op_type: ClassVar[str] = ""
    domain: ClassVar[str] = ""
    opset: ClassVar[int] = 21
    attributes: ClassVar[dict[str, Any]] = {}
    input_shapes: ClassVar[tuple[tuple[int, ...], ...]] = ()
    input_types: ClassVar[tuple[str, ...]] = ()
    output_types: ClassVar[tuple[str, ...]] = ()
    atol: ClassVar[float] = 1e-5
    rtol: ClassVar[float] = 1e-5
    cores: ClassVar[int] = 8
    seed: ClassVar[int] = 0

    # -- what a subclass provides -----------------------------------------------------------------------

    def reference(self, *inputs: np.ndarray) -> np.ndarray | tuple[np.ndarray, ...]:
        """The op computed with numpy (subclasses must override)."""
        raise NotImplementedError(f"{type(self).__name__} must define reference(*inputs)")

    def make_inputs(self, rng: np.random.Generator) -> list[np.ndarray]:
        """Random inputs: floats around zero (standard deviation 3), integers over their whole range."""
        arrays = []
        for shape, dtype in zip(self.input_shapes, self._input_types()):
            kind = np.dtype(dtype)
            if kind.kind == "f":
                arrays.append((rng.standard_normal(shape) * 3).astype(kind))
            else:
                info = np.iinfo(kind)
                arrays.append(rng.integers(int(info.min), int(info.max), size=shape, endpoint=True).astype(kind))
        return arrays

    # -- the host and the description -------------------------------------------------------------------

    @classmethod
    def make_host(cls) -> PluginHost:
        """An isolated host with the platforms' plugins and the operator plugin (stops with its reason if broken)."""
        if cls.plugin is None:
            raise PluginLoadFailed(f"{cls.__name__} must set the class attribute 'plugin'")
        host = PluginHost()
        for module, name in cls.platform_plugins:
            load_plugin_under_test(host, module, name)
        load_plugin_under_test(host, cls.plugin, cls.plugin_name)
        return host

    @classmethod
    def op_key(cls) -> str:
        return cls.op_type if cls.domain in ("", "ai.onnx") else f"{cls.domain}.{cls.op_type}"

    @classmethod
    def cases(cls, host: PluginHost | None) -> list[OperatorCase]:
        """Every (platform, layout, configuration) to compile; platforms that always tile have no untiled case."""
        registered = {} if host is None else {extension.name: extension for extension in host.extensions("platform")}
        cases = []
        for platform in cls.platforms:
            # An unregistered platform still gets its cases: they fail with the reason instead of collection failing.
            always_tiled = getattr(registered.get(platform), "memory_level", None) is not None
            for layout in LAYOUTS:
                for configuration in CONFIGURATIONS:
                    if not (always_tiled and configuration == "untiled"):
                        cases.append(OperatorCase(platform, layout, configuration))
        return cases

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrise the checks by platform, case and ONNX node case (collected once per subclass)."""
        try:
            host: PluginHost | None = type(self).make_host()
        except PluginLoadFailed:
            host = None  # the checks fail with the host's reason; collection must not
        if "operator_case" in metafunc.fixturenames:
            cases = self.cases(host)
            metafunc.parametrize("operator_case", cases, ids=[case.id for case in cases])
        if "claimed_platform" in metafunc.fixturenames:
            metafunc.parametrize("claimed_platform", list(self.platforms))
        if "onnx_node_case" in metafunc.fixturenames:
            node_cases = float32_node_cases({self.op_type}) if self.op_key() == self.op_type else []
            pairs = [(platform, case) for platform in self.platforms for case in node_cases]
            metafunc.parametrize("onnx_node_case", pairs, ids=[f"{p}-{c.name}" for p, c in pairs])

    @pytest.fixture(scope="class")
    @classmethod
    def operator_host(cls) -> PluginHost:
        return cls.make_host()

    @pytest.fixture(scope="class")
    @classmethod
    def operator_runtime_cache(cls, tmp_path_factory: pytest.TempPathFactory) -> Path:
        """Compiled runtime objects shared by the class's builds."""
        return tmp_path_factory.mktemp("operator-runtime-cache")

    def _input_types(self) -> tuple[str, ...]:
        return tuple(self.input_types) or ("float32",) * len(self.input_shapes)

    def _extensions(self, host: PluginHost) -> list[OperatorExtension]:
        """The plugin's registrations of this op."""
        names = host.record(self.plugin_name).extensions.get("operator", [])
        found = [host.extension("operator", name) for name in names]
        return [e for e in found if isinstance(e, OperatorExtension) and e.op_key == self.op_key()]

    def _extension(self, host: PluginHost, platform: str) -> OperatorExtension:
        matching = [e for e in self._extensions(host) if e.platform == platform]
        if not matching:
            pytest.fail(f"plugin {self.plugin_name!r} registers no operator {self.op_key()} for platform {platform!r}")
        return matching[0]

    # -- data and models --------------------------------------------------------------------------------

    def data(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The inputs and the reference outputs (cast to the declared output types)."""
        if not self.input_shapes:
            pytest.fail(f"{type(self).__name__} must set input_shapes (one shape per input)")
        inputs = self.make_inputs(np.random.default_rng(self.seed))
        result = self.reference(*inputs)
        outputs = list(result) if isinstance(result, (tuple, list)) else [result]
        types = tuple(self.output_types) or (self._input_types()[0],) * len(outputs)
        return inputs, [np.asarray(out).astype(np.dtype(dtype)) for out, dtype in zip(outputs, types)]

    def make_model(self, layout: str, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> onnx.ModelProto:
        """The test model: the op alone, or with every input and output passed through a pair of Transposes."""
        x_names = [f"x{i}" for i in range(len(inputs))]
        y_names = [f"y{i}" for i in range(len(outputs))]
        nodes: list[onnx.NodeProto] = []
        op_inputs, op_outputs = list(x_names), list(y_names)
        if layout == "between":
            op_inputs = [self._transposes(nodes, name, f"{name}_in", array.ndim, before=True)
                         for name, array in zip(x_names, inputs)]
            op_outputs = [f"{name}_out" for name in y_names]
        nodes.append(helper.make_node(self.op_type, op_inputs, op_outputs, name="op_under_test",
                                   domain=self.domain or None, **self.attributes))
        if layout == "between":
            for name, array in zip(y_names, outputs):
                self._transposes(nodes, f"{name}_out", name, array.ndim, before=False)
        graph = helper.make_graph(
            nodes, f"{self.op_type.lower()}_conformance",
            [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for n, a in zip(x_names, inputs)],
            [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
             for n, a in zip(y_names, outputs)],
        )
        opsets = [helper.make_opsetid("", self.opset)]
        if self.domain not in ("", "ai.onnx"):
            opsets.append(helper.make_opsetid(self.domain, 1))
        return helper.make_model(graph, opset_imports=opsets)

    @staticmethod
    def _transposes(nodes: list[onnx.NodeProto], source: str, target: str, rank: int, before: bool) -> str:
        """Two Transposes (reversed axes, then back) from ``source`` to ``target``: real copy layers, same shape."""
        perm = list(reversed(range(rank)))
        middle = f"{target}_t" if before else f"{source}_t"
        nodes.append(helper.make_node("Transpose", [source], [middle], perm=perm, name=f"{middle}_1"))
        nodes.append(helper.make_node("Transpose", [middle], [target], perm=perm, name=f"{middle}_2"))
        return target

    def _save(self, model: onnx.ModelProto, directory: Path, name: str) -> Path:
        path = directory / f"{name}.onnx"
        onnx.save(model, path)
        return path

    def _tolerance(self, extension: OperatorExtension, outputs: list[np.ndarray]) -> tuple[float, float]:
        if extension.numerics is OperatorNumerics.EXACT or all(out.dtype.kind in "iub" for out in outputs):
            return 0.0, 0.0
        return self.atol, self.rtol

    def _options(self, host: PluginHost, case: OperatorCase, l1: int | None) -> CompileOptions:
        platform = _platform_extension(host, case.platform)
        declared = next((spec for spec in platform.options if spec.name == "cores"), None)
        most = declared.maximum if declared is not None and declared.maximum is not None else 1
        cores = self.cores if most >= self.cores > 1 else None
        if case.configuration == "untiled":
            return CompileOptions(platform=case.platform, cores=cores)
        buffering = case.configuration.removeprefix("tiled-")
        return CompileOptions(platform=case.platform, level_sizes={"L1": l1 or 0}, buffering=buffering, cores=cores)

    def _expects_tiles(self, extension: OperatorExtension) -> bool:
        """Whether the tiler knows how to cut the op (a constraint of its own, or the core's for its op type)."""
        return extension.tile_constraint is not None or self.op_key() in DEFAULT_TILE_CONSTRAINTS

    # -- the checks -------------------------------------------------------------------------------------

    def test_plugin_loads_with_status_ok(self, operator_host: PluginHost) -> None:
        record = operator_host.record(self.plugin_name)
        assert record.status is PluginStatus.OK, f"plugin {self.plugin_name!r} {record.status.value}: {record.error}"

    def test_registers_the_op_for_exactly_the_claimed_platforms(self, operator_host: PluginHost) -> None:
        assert self.platforms, f"{type(self).__name__} must set platforms (the platforms the op is claimed for)"
        registered = sorted({extension.platform for extension in self._extensions(operator_host)})
        assert registered == sorted(self.platforms), (
            f"plugin {self.plugin_name!r} registers {self.op_key()} for {registered}, the test claims "
            f"{sorted(self.platforms)}")
        for platform in self.platforms:
            _platform_extension(operator_host, platform)

    def test_listed_in_supported_ops(self, claimed_platform: str, operator_host: PluginHost) -> None:
        rows = [row for row in supported_operators(operator_host, claimed_platform) if row["op"] == self.op_key()]
        sources = {row["source"] for row in rows}
        assert any(source.startswith(f"plugin {self.plugin_name}") for source in sources), (
            f"supported-ops --platform {claimed_platform} lists {self.op_key()} from {sorted(sources) or 'nobody'}")

    def test_reference_agrees_with_onnx_runtime(self, tmp_path: Path) -> None:
        inputs, outputs = self.data()
        path = self._save(self.make_model("alone", inputs, outputs), tmp_path, "reference")
        try:
            expected = run_reference(path, {f"x{i}": array for i, array in enumerate(inputs)})
        except DeeployError as error:
            pytest.skip(f"ONNX Runtime does not run {self.op_key()}: {error}")
        for index, (mine, theirs) in enumerate(zip(outputs, expected)):
            mine64, theirs64 = mine.astype(np.float64), np.asarray(theirs, dtype=np.float64)
            close = np.isclose(mine64, theirs64, atol=max(self.atol, 1e-6), rtol=max(self.rtol, 1e-5), equal_nan=True)
            worst = np.nanmax(np.abs(mine64 - theirs64))
            assert close.all(), (f"reference() output {index} disagrees with ONNX Runtime in {int((~close).sum())} of "
                                 f"{close.size} elements (max abs difference {worst:.3g})")

    def test_matches_the_reference(self, operator_case: OperatorCase, operator_host: PluginHost,
                                   operator_runtime_cache: Path, tmp_path: Path) -> None:
        _platform_extension(operator_host, operator_case.platform)
        extension = self._extension(operator_host, operator_case.platform)
        inputs, outputs = self.data()
        path = self._save(self.make_model(operator_case.layout, inputs, outputs), tmp_path, operator_case.id)
        atol, rtol = self._tolerance(extension, outputs)
        l1 = None if operator_case.configuration == "untiled" else _small_level(inputs, outputs)
        toolchain = Toolchain.from_environment(extra_flags=strict_flags())
        feeds = {f"x{i}": array for i, array in enumerate(inputs)}
        for _ in range(3):
            try:
                generated, result = validate_with_data(
                    path, self._options(operator_host, operator_case, l1), operator_host, feeds, outputs,
                    atol=atol, rtol=rtol, cache_dir=operator_runtime_cache, toolchain=toolchain)
                break
            except TilingInfeasibleError as error:
                if error.needed_bytes is None or l1 is None or error.needed_bytes <= l1:
                    raise
                l1 = error.needed_bytes  # the tiler's own diagnosis of the smallest size that can work
        else:
            pytest.fail(f"{operator_case.id}: no compute-level size found for the op")
        for comparison in result.comparisons:
            assert comparison.ok, (
                f"{operator_case.id}: output {comparison.name}: {comparison.mismatches}/{comparison.size} elements "
                f"outside atol={atol:g} rtol={rtol:g} (max abs error {comparison.max_abs_error:.3g})")
        if operator_case.configuration != "untiled":
            tiles = [layer["tiles"] for layer in generated.report["tiling"]["layers"] if layer["op"] == self.op_type]
            assert tiles, f"{operator_case.id}: the report has no tiled layer of {self.op_type}"
            if self._expects_tiles(extension):
                assert min(tiles) > 1, (f"{operator_case.id}: {self.op_type} ran as {min(tiles)} tile in an L1 of "
                                        f"{l1} bytes; its tile constraint should cut it")

    def test_onnx_node_cases(self, onnx_node_case: tuple[str, Any], operator_host: PluginHost,
                             operator_runtime_cache: Path, tmp_path: Path) -> None:
        platform, case = onnx_node_case
        extension = self._extension(operator_host, platform)
        path = self._save(case.model, tmp_path, "node_case")
        atol, rtol = self._tolerance(extension, case.outputs)
        _, result = validate_with_data(
            path, CompileOptions(platform=platform), operator_host, case.inputs, case.outputs,
            atol=max(atol, case.atol), rtol=max(rtol, case.rtol), cache_dir=operator_runtime_cache,
            toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
        for comparison in result.comparisons:
            assert comparison.ok, f"{case.name} on {platform}: max abs error {comparison.max_abs_error:.3g}"

    def test_compilation_is_deterministic(self, claimed_platform: str, operator_host: PluginHost,
                                          tmp_path: Path) -> None:
        inputs, outputs = self.data()
        path = self._save(self.make_model("between", inputs, outputs), tmp_path, "determinism")
        options = self._options(operator_host, OperatorCase(claimed_platform, "between", "tiled-double"),
                                _small_level(inputs, outputs) * 4)
        _, first = compile_model(path, options, operator_host)
        _, second = compile_model(path, options, self.make_host())
        assert first.files == second.files
        assert first.report == second.report


def _platform_extension(host: PluginHost, platform: str) -> PlatformExtension:
    names = {extension.name for extension in host.extensions("platform")}
    if platform not in names:
        pytest.fail(f"platform {platform!r} is not registered: add its plugin to platform_plugins "
                    f"(registered: {', '.join(sorted(names)) or 'none'})")
    extension = host.extension("platform", platform)
    assert isinstance(extension, PlatformExtension)
    return extension


def _small_level(inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
    """A compute level of a quarter of the op's tensors (at least 512 bytes): too small to hold them whole."""
    total = sum(array.nbytes for array in [*inputs, *outputs])
    return max(512, -(-total // 4 // 16) * 16)
