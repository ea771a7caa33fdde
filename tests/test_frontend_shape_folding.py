"""Shape arithmetic of PyTorch's TorchScript exporter is folded in the front end (issue 19, item 3).

Each network below writes one pattern node for node as ``torch.onnx.export(dynamo=False)`` does for a fixed-size
input (``Constant`` nodes, ``/Op_output_0`` names, int64 sizes): onnx's own inference with data propagation leaves
some tensor without a static shape (checked first, so each model really reproduces the failure), the importer folds
the chain away, the network compiles on generic-c (and tiled on pulp-cluster), its C runs and matches ONNX Runtime,
and none of the folded ops is left in the imported graph nor in the generated network.  Shape arithmetic after a
declared schema-less op folds too; what cannot be folded (a dynamic input, a size taken from input values, an absurd
size) is refused in one line that says why.  An optional test exports a small module with torch itself when it is
installed.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper, shape_inference

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.frontend.claims import platform_claims
from deeploy_core.frontend.importer import import_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.folders import folder_files
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin

class TorchScriptGraph:
    """Writes nodes the way the TorchScript exporter names them: ``/Op_k`` with outputs ``/Op_k_output_0``."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.counts: dict[str, int] = {}
        self.rng = np.random.default_rng(19)  # weights depend on the network alone, not on which tests ran before

    def op(self, op_type: str, *inputs: str, output: str | None = None, **attributes: Any) -> str:
        count = self.counts.get(op_type, 0)
        self.counts[op_type] = count + 1
        name = f"/{op_type}" if count == 0 else f"/{op_type}_{count}"
        out = output or f"{name}_output_0"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=name, **attributes))
        return out

    def constant(self, value: object, dtype: type = np.int64) -> str:
        """A ``Constant`` node, as the exporter writes every literal of the Python code."""
        return self.op("Constant", value=numpy_helper.from_array(np.asarray(value, dtype)))

    def weight(self, name: str, shape: tuple[int, ...]) -> str:
        self.initializers.append(numpy_helper.from_array(self.rng.standard_normal(shape).astype(np.float32), name))
        return name

    def size(self, tensor: str, axis: int) -> str:
        """``x.size(axis)``: Shape, then Gather of a scalar index (an int64 scalar)."""
        return self.op("Gather", self.op("Shape", tensor), self.constant(axis), axis=0)

    def as_list(self, *scalars: str) -> str:
        """A Python list of sizes: each scalar Unsqueezed, then one Concat."""
        return self.op("Concat", *(self.op("Unsqueeze", scalar, self.constant([0])) for scalar in scalars), axis=0)

    def save(self, path: Path, inputs: dict[str, tuple[int | str, ...]], outputs: dict[str, tuple[int | str, ...]]) -> Path:
        graph = helper.make_graph(
            self.nodes, "torch_jit",
            [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)) for name, shape in inputs.items()],
            [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)) for name, shape in outputs.items()],
            initializer=self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="pytorch")
        onnx.save(model, path)
        return path


# -- the exporter's patterns ----------------------------------------------------------------------------------------

def vit_class_token(path: Path, batch: int | str = 1) -> Path:
    """torchvision ViT: ``x.reshape(n, -1, 8)`` with n = x.size(0), then ``cls.expand(n, -1, -1)`` and a Concat.

    ``expand`` with -1 entries becomes ConstantOfShape/Mul/Equal/Where that swap each -1 for 1.
    """
    g = TorchScriptGraph()
    n = g.size("x", 0)
    tokens = g.op("Reshape", "x",
                  g.op("Concat", g.op("Unsqueeze", n, g.constant([0])), g.constant([-1]), g.constant([8]), axis=0))
    target = g.op("Concat", g.op("Unsqueeze", n, g.constant([0])), g.constant([-1]), g.constant([-1]), axis=0)
    ones = g.op("ConstantOfShape", g.constant([3]), value=numpy_helper.from_array(np.array([1], np.int64)))
    minus_ones = g.op("Mul", ones, g.constant(-1))
    shape = g.op("Where", g.op("Equal", target, minus_ones), ones, target)
    cls = g.op("Expand", g.weight("class_token", (1, 1, 8)), shape)
    joined = g.op("Concat", cls, tokens, axis=1)
    g.op("Add", joined, g.weight("pos_embedding", (1, 17, 8)), output="y")
    return g.save(path, {"x": (batch, 4, 4, 8)}, {"y": (batch, 17, 8)})


def channel_shuffle(path: Path) -> Path:
    """ShuffleNetV2: ``b, c, h, w = x.size(); x.view(b, 2, c // 2, h, w).transpose(1, 2).view(b, -1, h, w)``."""
    g = TorchScriptGraph()
    b, c, h, w = (g.size("x", axis) for axis in range(4))
    per_group = g.op("Div", c, g.constant(2))
    grouped = g.op("Reshape", "x", g.as_list(b, g.constant(2), per_group, h, w))
    swapped = g.op("Transpose", grouped, perm=[0, 2, 1, 3, 4])
    b2, h2, w2 = g.size("x", 0), g.size("x", 2), g.size("x", 3)
    shuffled = g.op("Reshape", swapped, g.as_list(b2, g.constant(-1), h2, w2))
    g.op("Relu", shuffled, output="y")
    return g.save(path, {"x": (1, 8, 3, 3)}, {"y": (1, 8, 3, 3)})


def slice_to_half(path: Path) -> Path:
    """EfficientViT-style split by size: ``x[:, : x.size(1) // 2]`` (Slice whose ends come from Shape/Div)."""
    g = TorchScriptGraph()
    half = g.op("Div", g.size("x", 1), g.constant(2))
    ends = g.op("Unsqueeze", half, g.constant([0]))
    first = g.op("Slice", "x", g.constant([0]), ends, g.constant([1]), g.constant([1]))
    g.op("Sigmoid", first, output="y")
    return g.save(path, {"x": (1, 10, 6)}, {"y": (1, 5, 6)})


def causal_attention_mask(path: Path) -> Path:
    """A causal mask built from sizes: ``i = arange(s); mask = zeros(s, s).masked_fill((i[None] > i[:, None]).long()
    == 1, -1e9)``, added to the scores before the softmax (Range, ConstantOfShape, Cast, Equal, Where)."""
    g = TorchScriptGraph()
    s = g.size("scores", 2)
    index = g.op("Range", g.constant(0), s, g.constant(1))
    future = g.op("Greater", g.op("Unsqueeze", index, g.constant([0])), g.op("Unsqueeze", index, g.constant([1])))
    is_future = g.op("Equal", g.op("Cast", future, to=TensorProto.INT64), g.constant(1))
    zeros = g.op("ConstantOfShape", g.as_list(s, s), value=numpy_helper.from_array(np.array([0.0], np.float32)))
    mask = g.op("Where", is_future, g.constant(-1e9, np.float32), zeros)
    g.op("Softmax", g.op("Add", "scores", mask), output="y", axis=-1)
    return g.save(path, {"scores": (1, 2, 5, 5)}, {"y": (1, 2, 5, 5)})


def position_range(path: Path) -> Path:
    """``pos_table[torch.arange(x.size(1))]`` added to x: Range whose limit is a size, then a Gather of a table."""
    g = TorchScriptGraph()
    positions = g.op("Range", g.constant(0), g.size("x", 1), g.constant(1))
    embedded = g.op("Gather", g.weight("pos_table", (12, 6)), positions, axis=0)
    g.op("Add", "x", embedded, output="y")
    return g.save(path, {"x": (1, 7, 6)}, {"y": (1, 7, 6)})


def window_crop(path: Path) -> Path:
    """Windowed attention crops to a multiple of the window: ``x[..., : w - w % 4]`` (Mod, Sub, Slice)."""
    g = TorchScriptGraph()
    w = g.size("x", 3)
    kept = g.op("Sub", w, g.op("Mod", w, g.constant(4)))
    cropped = g.op("Slice", "x", g.constant([0]), g.op("Unsqueeze", kept, g.constant([0])), g.constant([3]))
    g.op("Relu", cropped, output="y")
    return g.save(path, {"x": (1, 2, 3, 10)}, {"y": (1, 2, 3, 8)})


def cast_size(path: Path) -> Path:
    """``x.view(b, int(n * 0.5), -1)``: sizes cast to float, scaled, floored and cast back before a Reshape."""
    g = TorchScriptGraph()
    n = g.size("x", 1)
    scaled = g.op("Floor", g.op("Mul", g.op("Cast", n, to=TensorProto.FLOAT), g.constant(0.5, np.float32)))
    rows = g.op("Cast", scaled, to=TensorProto.INT64)
    viewed = g.op("Reshape", "x", g.as_list(g.size("x", 0), rows, g.constant(-1)))
    g.op("Relu", viewed, output="y")
    return g.save(path, {"x": (1, 6, 4)}, {"y": (1, 3, 8)})


NETWORKS: dict[str, tuple[Callable[[Path], Path], frozenset[str]]] = {
    "vit class token": (vit_class_token, frozenset({"Shape", "ConstantOfShape", "Equal", "Where", "Expand"})),
    "shufflenet channel shuffle": (channel_shuffle, frozenset({"Shape", "Gather", "Div", "Unsqueeze", "Concat"})),
    "slice with shape-derived ends": (slice_to_half, frozenset({"Shape", "Gather", "Div", "Unsqueeze"})),
    "attention mask": (causal_attention_mask,
                       frozenset({"Shape", "Range", "Greater", "Cast", "Equal", "ConstantOfShape", "Where"})),
    "range": (position_range, frozenset({"Shape", "Range"})),
    "mod": (window_crop, frozenset({"Shape", "Mod", "Sub", "Unsqueeze"})),
    "cast of sizes": (cast_size, frozenset({"Shape", "Cast", "Floor", "Mul", "Concat"})),
}


@pytest.fixture(scope="module")
def host() -> PluginHost:
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


def _unshaped(model: onnx.ModelProto) -> list[str]:
    """Tensors onnx's strict inference with data propagation leaves without a static shape."""
    inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    return [value.name for value in inferred.graph.value_info
            if not all(dim.HasField("dim_value") for dim in value.type.tensor_type.shape.dim)]


def _inputs(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {value.name: rng.standard_normal([dim.dim_value for dim in value.type.tensor_type.shape.dim])
            .astype(np.float32) for value in model.graph.input}


@pytest.mark.parametrize("case", sorted(NETWORKS))
def test_exporter_pattern_is_folded_and_validates(case: str, host: PluginHost, tmp_path: Path) -> None:
    build, folded_ops = NETWORKS[case]
    path = build(tmp_path / "model.onnx")
    model = onnx.load(path)
    assert _unshaped(model), "the network must reproduce what onnx's inference alone cannot shape"
    imported = import_model(path, claims=platform_claims(host, "generic-c"))
    assert not {node.op for node in imported.graph.nodes} & folded_ops
    assert all(all(isinstance(dim, int) for dim in tensor.shape) for tensor in imported.graph.tensors().values()
               if tensor.shape is not None)
    generated, result = validate_with_data(path, CompileOptions(platform="generic-c"), host, _inputs(model),
                                           atol=1e-5, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    left = {layer["op"] for layer in generated.report["layers"]} & folded_ops
    assert not left, f"folded ops still in the generated network: {sorted(left)}"


@pytest.mark.parametrize("case", sorted(NETWORKS))
def test_folded_pattern_validates_tiled_on_the_cluster(case: str, host: PluginHost, tmp_path: Path) -> None:
    """The folding is the front end's, so the cluster gets the same static graph: tiled into 4 kB of L1, double
    buffered, on 8 cores."""
    build, folded_ops = NETWORKS[case]
    path = build(tmp_path / "model.onnx")
    options = CompileOptions(platform="pulp-cluster", level_sizes={"L1": 4096}, buffering="double", cores=8)
    generated, result = validate_with_data(path, options, host, _inputs(onnx.load(path)), atol=1e-5, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    assert not {layer["op"] for layer in generated.report["layers"]} & folded_ops


def test_folding_is_deterministic(host: PluginHost, tmp_path: Path) -> None:
    """Two compiles of a folded network write byte-identical C and report.json."""
    path = channel_shuffle(tmp_path / "shuffle.onnx")
    written = []
    for run in ("a", "b"):
        _, generated = compile_model(path, CompileOptions(platform="generic-c"), host)
        generated.write(tmp_path / run)
        written.append(folder_files(tmp_path / run))
    assert written[0] == written[1]


def shuffle_after_debug_print(path: Path) -> Path:
    """The channel shuffle reading its sizes from the output of a schema-less op the platform declares (Deeploy's
    DebugPrint): the folding sees that output's shape through the declaration."""
    g = TorchScriptGraph()
    printed = g.op("DebugPrint", "x")
    b, c, h, w = (g.size(printed, axis) for axis in range(4))
    grouped = g.op("Reshape", printed, g.as_list(b, g.constant(2), g.op("Div", c, g.constant(2)), h, w))
    swapped = g.op("Transpose", grouped, perm=[0, 2, 1, 3, 4])
    g.op("Reshape", swapped, g.as_list(b, g.constant(-1), h, w), output="y")
    return g.save(path, {"x": (1, 8, 3, 3)}, {"y": (1, 8, 3, 3)})


def test_shape_arithmetic_after_a_declared_op_is_folded(host: PluginHost, tmp_path: Path) -> None:
    path = shuffle_after_debug_print(tmp_path / "printed.onnx")
    x = np.random.default_rng(5).standard_normal((1, 8, 3, 3)).astype(np.float32)
    expected = x.reshape(1, 2, 4, 3, 3).transpose(0, 2, 1, 3, 4).reshape(1, 8, 3, 3)
    generated, result = validate_with_data(path, CompileOptions(platform="generic-c"), host, {"x": x}, [expected],
                                           atol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    ops = [layer["op"] for layer in generated.report["layers"]]
    assert "DebugPrint" in ops and not {"Shape", "Gather", "Div", "Unsqueeze", "Concat"} & set(ops), ops


# -- what stays unknown --------------------------------------------------------------------------------------------

def _cli(*args: str, address_space: int | None = None) -> subprocess.CompletedProcess[str]:
    """``deeploy-core ARGS`` with generic-c; ``address_space`` caps the child's memory (bytes)."""

    def limit() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.run([sys.executable, "-m", "deeploy_core", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"}, preexec_fn=limit)


def test_dynamic_batch_is_batch_1_and_input_shape_sets_another(tmp_path: Path) -> None:
    """The ViT pattern exported with a dynamic batch: compiled for batch 1 with one notice (its Shape → Gather →
    Reshape chains folded), validated with no flags; --input-shape sets another batch."""
    path = vit_class_token(tmp_path / "vit.onnx", batch="batch")
    compiled = _cli("compile", str(path), "--platform", "generic-c", "-o", str(tmp_path / "out"), "-q")
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stderr.splitlines() == [
        "notice: input 'x' has a dynamic batch dimension 'batch': compiling for batch 1 (--input-shape sets another)"]
    assert _cli("validate", str(path), "--platform", "generic-c").returncode == 0
    fixed = _cli("validate", str(path), "--platform", "generic-c", "--input-shape", "x=2x4x4x8")
    assert fixed.returncode == 0, fixed.stderr


def data_dependent_slice(path: Path) -> Path:
    """``x[:, : int(k)]``: the size comes from the value of input ``k``, which no folding can know."""
    g = TorchScriptGraph()
    ends = g.op("Cast", "k", to=TensorProto.INT64)
    first = g.op("Slice", "x", g.constant([0]), ends, g.constant([1]))
    g.op("Relu", first, output="y")
    return g.save(path, {"x": (1, 6, 4), "k": (1,)}, {"y": (1, 3, 4)})


def test_value_dependent_shape_names_the_input_it_comes_from(tmp_path: Path) -> None:
    """With every input fixed, a shape that depends on input data is refused in one line naming node and input."""
    refused = _cli("compile", str(data_dependent_slice(tmp_path / "slice.onnx")), "--platform", "generic-c",
                   "-o", str(tmp_path / "out"))
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: node '/Slice' (Slice): tensor '/Slice_output_0' has no "
                                                   "static shape"), refused.stderr
    assert "graph input 'k'" in lines[0] and "'x'" not in lines[0].split("graph input", 1)[1]


def absurd_after_folding(path: Path) -> Path:
    """A 2^40-element ConstantOfShape whose size is shape arithmetic (Mod, which onnx does not propagate)."""
    g = TorchScriptGraph()
    size = g.op("Mul", g.op("Mod", g.size("x", 1), g.constant(1000)), g.constant(1 << 38))
    huge = g.op("ConstantOfShape", g.op("Unsqueeze", size, g.constant([0])),
                value=numpy_helper.from_array(np.array([0.0], np.float32)))
    g.op("Add", "x", g.op("ReduceMax", huge, keepdims=1), output="y")
    return g.save(path, {"x": (1, 4)}, {"y": (1, 4)})


def test_folding_never_evaluates_an_absurd_size(tmp_path: Path) -> None:
    """The size is folded, the 4 TiB tensor is not: the importer's size check refuses it in one line (the compile
    runs in 4 GiB of address space, so an attempt to fold the tensor fails the test instead of the machine)."""
    refused = _cli("compile", str(absurd_after_folding(tmp_path / "huge.onnx")), "--platform", "generic-c",
                   "-o", str(tmp_path / "out"), address_space=4 << 30)
    assert refused.returncode == 2, refused.stderr
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "node '/ConstantOfShape' (ConstantOfShape)" in lines[0], refused.stderr
    assert "[1099511627776]" in lines[0] and "more than the 2147483648 bytes" in lines[0]


# -- a real TorchScript export -------------------------------------------------------------------------------------

def _export_tiny_transformer(path: Path) -> Path:
    """A small module whose legacy export holds every chain above: channel shuffle, crop to a multiple of 4, class
    token, position table indexed by ``arange``, scaling by ``sqrt(size)``, additive causal mask, a Linear."""
    torch = pytest.importorskip("torch", reason="torch is not installed (the optional 'models' extra)")
    nn = torch.nn

    class TinyTransformer(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            generator = torch.Generator().manual_seed(0)
            self.cls = nn.Parameter(torch.randn(1, 1, 8, generator=generator))
            self.pos = nn.Parameter(torch.randn(16, 8, generator=generator))
            self.proj = nn.Linear(8, 8)

        def forward(self, x: Any) -> Any:
            b, c, h, w = x.size()
            x = x.view(b, 2, c // 2, h, w).transpose(1, 2).reshape(b, -1, h, w)
            t = x.flatten(2).transpose(1, 2)
            t = t[:, : t.size(1) - t.size(1) % 4]
            t = torch.cat([self.cls.expand(b, -1, -1), t], dim=1)
            n = t.size(1)
            t = t + self.pos[torch.arange(n)]
            scores = t @ t.transpose(1, 2) / float(t.size(-1)) ** 0.5
            mask = torch.zeros(n, n).masked_fill(torch.ones(n, n).triu(1).bool(), -1e9)
            return self.proj((scores + mask).softmax(-1) @ t)

    torch.manual_seed(0)
    with warnings.catch_warnings():  # the tracer's notes on sizes turned into Python numbers, and the legacy
        warnings.simplefilter("ignore")  # exporter's deprecation: both expected here
        torch.onnx.export(TinyTransformer().eval(), (torch.randn(1, 8, 2, 5),), str(path), dynamo=False,
                          input_names=["x"], output_names=["y"], opset_version=17)
    return path


def test_torchscript_export_of_a_small_transformer_validates(host: PluginHost, tmp_path: Path) -> None:
    path = _export_tiny_transformer(tmp_path / "tiny.onnx")
    model = onnx.load(path)
    exported = {node.op_type for node in model.graph.node}
    chains = {"Shape", "ConstantOfShape", "Expand", "Where", "Equal", "Range", "Mod", "Cast", "Trilu"}
    assert chains <= exported, f"the exporter no longer writes {sorted(chains - exported)}"
    assert _unshaped(model)
    generated, result = validate_with_data(path, CompileOptions(platform="generic-c"), host, _inputs(model),
                                           atol=1e-5, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    left = {layer["op"] for layer in generated.report["layers"]} & chains
    assert not left, f"folded ops still in the generated network: {sorted(left)}"
