"""Why the kernels may keep ``restrict``: no kernel is ever handed an output that overlaps what else it touches.

ISO C (6.7.3.1) makes it undefined to modify an object through a ``restrict``
pointer while another pointer of the same call reaches it.  The runtime's
kernels (``dcg_kernels.h``, ``dcg_reduce.h``) and the inline loops of the
templates (``kernels/dot_rows.py``, ``kernels/matmul_rows.py``, ``integer.py``) qualify
their output, input and scratch pointers so; two read-only operands may still
be one tensor (``Mul(a, a)``), which the standard allows.  What could break
it is the memory plan, if it let a layer write its output over an input (as
an in-place elementwise operation would) or over its scratch.  It does not,
and these tests check it on the plans themselves:

* untiled, every layer's inputs, outputs and scratch are alive at its step,
  so the verified arena plan gives them disjoint bytes (views share their
  source's bytes, but only alias layers make views and they call no kernel);
* tiled, a layer's (or a fused pattern's) tile buffers are placed all at
  once in the compute level, every slot of them; a fused consumer reads its
  producer's output block, never its own.

For every layer that runs code, the written byte ranges (outputs, scratch)
are asserted disjoint from every other range the layer touches, on networks
made to tempt in-place reuse (elementwise chains, an operand used twice,
views and slab splits between kernels, a view as the graph output) and on
every Deeploy peer network, untiled, tiled on the generic C platform and on
the cluster.  Each tempting network's plan must really reuse bytes across
layers (else the check would prove nothing), and its code is built and run
against ONNX Runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.compilation import Compilation
from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.midend import memory_plan
from deeploy_core.midend.lifetimes import Lifetime, compute_lifetimes
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.testing.models import conformance_model
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root
from deeploy_core.tiling.layer_layout import LayerLayout
from deeploy_core.tiling.outer_level import OuterLevelPlacement
from deeploy_core.tiling.state import TilingState
from deeploy_core.validate import Toolchain

ROOT = peer_tests_root(Path(__file__).parent)
PEERS = find_peer_tests(ROOT) if ROOT else []
OPSET = 18


@dataclass(frozen=True)
class Region:
    """Bytes ``[start, end)`` of one memory space that a layer reads, or writes when ``written``."""

    what: str
    space: str
    start: int
    end: int
    written: bool


def clashes(layer: str, regions: list[Region]) -> list[str]:
    """Pairs of a layer's regions that share bytes while one of them is written."""
    return [f"{layer}: {a.what} [{a.start}, {a.end}) and {b.what} [{b.start}, {b.end}) share {a.space} bytes"
            for a, b in combinations(regions, 2)
            if (a.written or b.written) and a.space == b.space and a.start < b.end and b.start < a.end]


def is_view_layer(layer: Layer) -> bool:
    """Reshape, Flatten, Squeeze, Identity, contiguous Split: their outputs are views and they emit no call."""
    return layer.representation.get("alias_of") is not None


def home_regions(layer: Layer, compilation: Compilation) -> list[Region]:
    """The layer's buffers where the memory plan put them (the arena, or the level beyond it)."""
    ctxt = compilation.ctxt
    outer = compilation.results.get(OuterLevelPlacement)
    moved = set(outer.moved) if outer is not None else set()
    written = {*layer.output_names, *layer.transients}
    regions = []
    for name in dict.fromkeys([*layer.input_names, *layer.output_names, *layer.transients]):
        storage = ctxt.storage_of(name)
        if storage.kind is BufferKind.CONSTANT or storage.offset is None:
            continue  # read-only arrays of their own; a fused intermediate has no home bytes
        start = storage.offset + ctxt.view_offset(name)
        space = outer.level if outer is not None and storage.name in moved else "arena"
        regions.append(Region(name, space, start, start + ctxt[name].size_bytes, name in written))
    return regions


def tile_regions(layout: LayerLayout, scratch_sizes: dict[str, int]) -> list[Region]:
    """The tile buffers of one tiled layer, every slot of each (``scratch_sizes``: key → bytes of all copies)."""
    regions = []
    for index, (offset, size) in sorted(layout.inputs.items()):
        copies = 1 if index in layout.resident or index in layout.local_inputs else layout.slots
        regions.append(Region(f"in{index}", "compute level", offset, offset + size * copies, False))
    for index, (offset, size) in sorted(layout.outputs.items()):
        copies = 1 if index in layout.local_outputs else layout.slots
        regions.append(Region(f"out{index}", "compute level", offset, offset + size * copies, True))
    for key, offset in sorted(layout.scratch.items()):
        regions.append(Region(f"scratch:{key}", "compute level", offset, offset + scratch_sizes[key], True))
    return regions


@dataclass
class Checked:
    """What :func:`restrict_violations` found: the overlapping pairs, and how many layers it checked where."""

    problems: list[str]
    home: int = 0
    """Layers whose kernels run on the arena (or the level beyond it)."""
    tiles: int = 0
    """Layers whose kernels run on tile buffers in the compute level."""


def restrict_violations(compilation: Compilation) -> Checked:
    """Every layer that runs code, checked where its kernel's pointers point."""
    state = compilation.results.get(TilingState)
    layouts = state.layouts if state is not None else {}
    blocks = {block.name: block.size for level in (state.level_maps.values() if state else []) for block in level.blocks}
    checked = Checked([])
    for layer in compilation.layers:
        if is_view_layer(layer):
            continue
        layout = layouts.get(layer.c_name)
        if layout is None:
            regions = home_regions(layer, compilation)
            checked.home += 1
        else:
            scratch = {key: blocks[f"{layer.c_name}/scratch:{key}"] for key in layout.scratch}
            regions = tile_regions(layout, scratch)
            checked.tiles += 1
        checked.problems += clashes(layer.name, regions)
    return checked


def reuses_bytes(compilation: Compilation) -> bool:
    """Whether the arena plan gives two buffers the same bytes at different times (in-place reuse was open)."""
    plan = compilation.memory_plan
    assert plan is not None
    spans = [(plan.offsets[name], plan.offsets[name] + plan.sizes[name]) for name in plan.offsets]
    return any(a[0] < b[1] and b[0] < a[1] for a, b in combinations(spans, 2))


# ---- networks that tempt in-place reuse --------------------------------------------------------------------------

def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           initializers: Sequence[onnx.TensorProto] = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "restrict", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model, full_check=True)
    return model


def _float(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _ints(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def unary_chain() -> onnx.ModelProto:
    """Six elementwise layers in a row: each output could take its input's bytes."""
    ops = ["Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs"]
    names = ["x", *[f"t{i}" for i in range(len(ops) - 1)], "y"]
    nodes = [helper.make_node(op, [names[i]], [names[i + 1]]) for i, op in enumerate(ops)]
    return _model(nodes, [_float("x", [1, 4, 8, 8])], [_float("y", [1, 4, 8, 8])])


def one_operand_twice() -> onnx.ModelProto:
    """``Mul(a, a)``, ``MatMul(b, b)``, ``Add(c, c)``: one tensor as two read-only operands of one call."""
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Mul", ["a", "a"], ["b"]),
             helper.make_node("MatMul", ["b", "b"], ["c"]), helper.make_node("Add", ["c", "c"], ["y"])]
    return _model(nodes, [_float("x", [1, 4, 8, 8])], [_float("y", [1, 4, 8, 8])])


def views_between_kernels() -> onnx.ModelProto:
    """Views between kernels, and a view as the graph output: Relu, Reshape, Softmax, Transpose, Pad, Reshape."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Reshape", ["a", "rows"], ["v"]),
        helper.make_node("Softmax", ["v"], ["s"], axis=-1),
        helper.make_node("Transpose", ["s"], ["t"], perm=[1, 0]),
        helper.make_node("Pad", ["t", "pads"], ["p"]),
        helper.make_node("Reshape", ["p", "flat"], ["y"]),
    ]
    return _model(nodes, [_float("x", [1, 4, 8, 8])], [_float("y", [80 * 4])],
                  [_ints("rows", [4, 64]), _ints("pads", [0, 0, 16, 0]), _ints("flat", [80 * 4])])


def slab_split() -> onnx.ModelProto:
    """A contiguous Split (two views of one buffer) read by Add and Concat, then ReduceMean and LayerNorm."""
    scale = numpy_helper.from_array(np.linspace(0.5, 1.5, 128, dtype=np.float32).reshape(8, 4, 4), "scale")
    bias = numpy_helper.from_array(np.linspace(-0.2, 0.2, 128, dtype=np.float32).reshape(8, 4, 4), "bias")
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["a"]),
        helper.make_node("Split", ["a", "halves"], ["s0", "s1"], axis=1),
        helper.make_node("Add", ["s0", "s1"], ["c"]),
        helper.make_node("Concat", ["c", "s0"], ["d"], axis=1),
        helper.make_node("ReduceMean", ["d", "spatial"], ["m"], keepdims=1),
        helper.make_node("Sub", ["d", "m"], ["e"]),
        helper.make_node("LayerNormalization", ["e", "scale", "bias"], ["y"], axis=1),
    ]
    return _model(nodes, [_float("x", [1, 8, 4, 4])], [_float("y", [1, 8, 4, 4])],
                  [_ints("halves", [4, 4]), _ints("spatial", [2, 3]), scale, bias])


def dense_layers() -> onnx.ModelProto:
    """Gemm, Relu, Gemm, Softmax, Slice, Gather: the matrix kernels and the data movement ones."""
    rng = np.random.default_rng(5)
    weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)
               for name, shape in (("w1", (16, 16)), ("b1", (16,)), ("w2", (16, 16)), ("b2", (16,)))]
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["g"]),
        helper.make_node("Relu", ["g"], ["r"]),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["h"], transB=1),
        helper.make_node("Softmax", ["h"], ["s"], axis=1),
        helper.make_node("Slice", ["s", "starts", "ends", "axes"], ["c"]),
        helper.make_node("Gather", ["c", "picked"], ["y"], axis=1),
    ]
    return _model(nodes, [_float("x", [4, 16])], [_float("y", [4, 3])],
                  [*weights, _ints("starts", [2]), _ints("ends", [14]), _ints("axes", [1]), _ints("picked", [0, 5, 11])])


TEMPTING: dict[str, Callable[[], onnx.ModelProto]] = {
    "unary-chain": unary_chain,
    "one-operand-twice": one_operand_twice,
    "views-between-kernels": views_between_kernels,
    "slab-split": slab_split,
    "dense-layers": dense_layers,
}
CATALOGUE = ("mlp", "cnn", "depthwise_cnn", "residual_block")
MODES: dict[str, partial[CompileOptions]] = {
    "untiled": partial(CompileOptions, platform="generic-c"),
    "tiled-double": partial(CompileOptions, platform="generic-c", level_sizes={"L1": 4000}, buffering="double"),
    "cluster": partial(CompileOptions, platform="pulp-cluster", level_sizes={"L1": 8000}),
}
"""Compile settings: the arena alone; tiles in a small L1 with two slots per streamed tensor (fusion on, the
tilers' default); the cluster's tiling with its fused patterns and per-core scratch copies."""
PEER_MODES: dict[str, partial[CompileOptions]] = {
    "untiled": partial(CompileOptions, platform="generic-c"),
    "tiled-double": partial(CompileOptions, platform="generic-c", level_sizes={"L1": 16000}, buffering="double"),
    "cluster": partial(CompileOptions, platform="pulp-cluster"),
}


@pytest.fixture(scope="module")
def host() -> PluginHost:
    """The generic C platform, and the cluster when it is installed."""
    from deeploy_generic_c import plugin as generic_c_plugin

    plugin_host = PluginHost()
    plugin_host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    try:
        from deeploy_pulp_cluster import plugin as cluster_plugin
    except ImportError:
        return plugin_host
    plugin_host.add_plugin(cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugin_host


def options_for(mode: partial[CompileOptions], **extra: object) -> CompileOptions:
    if mode.keywords["platform"] == "pulp-cluster":
        pytest.importorskip("deeploy_pulp_cluster", reason="the pulp-cluster platform is not installed")
    return mode(**extra)


def compiled(model_path: Path, options: CompileOptions, host: PluginHost) -> Compilation:
    deployer, _ = compile_model(model_path, options, host)
    return deployer.compilation


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("network", sorted(TEMPTING))
def test_no_layer_writes_over_what_it_reads_in_networks_that_tempt_in_place_reuse(
        network: str, mode: str, host: PluginHost, tmp_path: Path, runtime_cache: Path) -> None:
    path = tmp_path / f"{network}.onnx"
    onnx.save(TEMPTING[network](), path)
    options = options_for(MODES[mode])
    compilation = compiled(path, options, host)
    checked = restrict_violations(compilation)
    assert checked.problems == []
    if mode == "untiled":
        assert checked.home >= 3 and checked.tiles == 0
        assert reuses_bytes(compilation), "the plan reuses no bytes: this network tests nothing"
    else:
        assert checked.tiles >= 3
    shape = [dim.dim_value for dim in onnx.load(path).graph.input[0].type.tensor_type.shape.dim]
    data = {"x": np.random.default_rng(29).standard_normal(shape).astype(np.float32)}
    _, result = validate_with_data(path, options, host, data, atol=1e-5, rtol=1e-5, repeats=1,
                                   cache_dir=runtime_cache,
                                   toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert all(comparison.ok for comparison in result.comparisons), result.comparisons


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("network", CATALOGUE)
def test_no_layer_writes_over_what_it_reads_in_the_catalogue(network: str, mode: str, host: PluginHost,
                                                             tmp_path: Path) -> None:
    path = tmp_path / f"{network}.onnx"
    onnx.save(conformance_model(network), path)
    checked = restrict_violations(compiled(path, options_for(MODES[mode]), host))
    assert checked.problems == [] and (checked.home if mode == "untiled" else checked.tiles) > 0


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
@pytest.mark.parametrize("mode", sorted(PEER_MODES))
def test_no_layer_writes_over_what_it_reads_in_any_peer_network(mode: str, host: PluginHost) -> None:
    problems: list[str] = []
    for peer in PEERS:
        checked = restrict_violations(
            compiled(peer.model, options_for(PEER_MODES[mode], input_types=peer.input_types()), host))
        assert checked.home + checked.tiles > 0, peer.name
        problems += [f"{peer.name}: {problem}" for problem in checked.problems]
    assert problems == []


def test_the_check_sees_an_overlap() -> None:
    """The checker itself: an output over an input, or over scratch, is reported; two read operands are not."""
    read = Region("a", "arena", 0, 64, False)
    assert clashes("l", [read, Region("a2", "arena", 0, 64, False)]) == []
    assert clashes("l", [read, Region("y", "arena", 32, 96, True)])
    assert clashes("l", [read, Region("y", "L3", 0, 64, True)]) == []
    assert clashes("l", [Region("y", "arena", 64, 128, True), Region("s", "arena", 100, 120, True)])


def test_a_plan_that_let_outputs_take_their_inputs_bytes_would_be_caught(
        host: PluginHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Were an activation dead during its last reader's step, first fit would put that layer's output over it."""
    def ending_before_last_read(layers: list[Layer], ctxt: NetworkContext) -> dict[str, Lifetime]:
        return {name: Lifetime(life.first, max(life.first + 1, life.end - 1))
                if ctxt[name].kind is BufferKind.ACTIVATION else life
                for name, life in compute_lifetimes(layers, ctxt).items()}

    monkeypatch.setattr(memory_plan, "compute_lifetimes", ending_before_last_read)
    path = tmp_path / "unary-chain.onnx"
    onnx.save(unary_chain(), path)
    problems = restrict_violations(compiled(path, options_for(MODES["untiled"]), host)).problems
    assert problems and all("share arena bytes" in problem for problem in problems), problems
