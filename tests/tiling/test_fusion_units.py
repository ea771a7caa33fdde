"""The pieces of fused tiling on their own: composed extents, and the pattern transformation's driver.

The end-to-end checks (fused networks run bit-exactly, traffic falls and never
rises, the emulator's DMA counts equal the report) are in
plugins/pulp_cluster/tests/test_fused_tiling.py and test_peer_cluster.py.
"""

from __future__ import annotations

from types import SimpleNamespace

import onnx_graphsurgeon as gs
import pytest

from deeploy_core.passes.subgraph import SubgraphTransformation
from deeploy_core.tiling.fusion.boxes import PatternCost
from deeploy_core.tiling.fusion.extents import ChainedExtent, compose
from deeploy_core.tiling.fusion.pattern import FusedPattern
from deeploy_core.tiling.fusion.transformation import FuseAdjacentPatterns, PatternGraph, Verdict
from deeploy_core.tiling.geometry import Extent
from deeploy_core.tiling import solving


def conv_rows(full: int, stride: int = 1, kernel: int = 3) -> Extent:
    """A convolution's input rows for an output tile of t rows: ``min(full, stride · t + kernel − stride)``."""
    return Extent(full, 2, stride, kernel - stride)


def test_two_3x3_convolutions_need_a_halo_of_two_rows_each() -> None:
    intermediate = conv_rows(32)                # the second conv reads t + 2 rows of the first one's output
    outer = (Extent(1), Extent(8), intermediate, Extent(32))
    first_input = compose(conv_rows(32), outer)  # ... which reads t + 4 rows of the network input
    assert isinstance(first_input, ChainedExtent) and first_input.axis == 2
    assert [first_input.size_of(t) for t in (1, 4, 28, 32)] == [5, 8, 32, 32]


def test_a_stride_multiplies_the_halo_that_follows() -> None:
    outer = (Extent(1), Extent(8), conv_rows(16), Extent(16))          # 3x3 stride 1 on a 16-row map
    strided = compose(conv_rows(33, stride=2), outer)                   # fed by a 3x3 stride-2 conv of 33 rows
    assert strided.size_of(4) == 2 * (4 + 2) + 1                        # 6 intermediate rows need 13 input rows
    assert strided.size_of(16) == 33


def test_an_axis_the_consumer_reads_whole_stays_constant() -> None:
    outer = (Extent(1), Extent(16), conv_rows(8), Extent(8))           # a pointwise conv reads every channel
    weights = compose(Extent(16, 1), outer)                             # the producer's weights follow its channels
    assert weights.axis is None and weights.size_of(1) == 16


def _layer(index: int) -> SimpleNamespace:
    return SimpleNamespace(index=index, c_name=f"layer{index}", node=gs.Node("Relu", name=f"n{index}"))


def test_the_transformation_merges_adjacent_patterns_while_the_judge_accepts() -> None:
    layers = [_layer(i) for i in range(5)]
    graph = PatternGraph([FusedPattern((layer,)) for layer in layers])  # type: ignore[arg-type]
    asked: list[tuple[str, ...]] = []

    def judge(first: FusedPattern, second: FusedPattern, _: PatternGraph) -> Verdict | None:
        asked.append(first.names + second.names)
        if "layer2" in second.names[:1]:  # layer1 -> layer2 may not be fused
            return None
        return Verdict(first.merged(second, 0), {}, PatternCost(0, 0, 0, 0, 1))

    transformation = FuseAdjacentPatterns(judge)
    assert isinstance(transformation, SubgraphTransformation)
    assert transformation.apply_pass(graph, {}) == 3
    assert [pattern.names for pattern in graph.patterns] == [("layer0", "layer1"), ("layer2", "layer3", "layer4")]
    assert len(asked) == len(set(asked)), "every pair is judged once, however often the driver re-matches"


def _peer_networks() -> list:
    from pathlib import Path

    from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

    root = peer_tests_root(Path(__file__).parent)
    if root is None:
        return []
    mlperf = root.parent.parent / "bench" / "deeploy-mlperf"
    peers = [p for p in find_peer_tests(root) if p.name in ("Models/CCT/FP32/CCT_1_16_16_8", "Models/MLPerf/KeywordSpotting")]
    return peers + ([p for p in find_peer_tests(mlperf) if p.name == "VisualWakeWords"] if mlperf.is_dir() else [])


@pytest.mark.parametrize("peer", _peer_networks(), ids=lambda peer: peer.name)
def test_the_pattern_model_bounds_every_real_tile(peer) -> None:
    """For every fused pattern of real networks (convolution halos, strides, attention), each tensor's extent in the
    pattern's CP model, at the tile it chose, is at least the largest box that tensor really has: the model never
    promises the compute level less than the tiles need."""
    import math

    from deeploy_core.api import CompileOptions, compile_model
    from deeploy_core.plugins import PluginHost
    from deeploy_core.tiling.fusion.boxes import pattern_boxes
    from deeploy_core.tiling.fusion.model import pattern_model
    from deeploy_core.tiling.solution import TilingSolution
    from deeploy_core.tiling.state import TilingState

    generic_c = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C platform plugin is not installed")
    host = PluginHost()
    host.add_plugin(generic_c, name="generic-c")
    deployer, _ = compile_model(peer.model, CompileOptions(platform="generic-c", input_types=peer.input_types(),
                                                           level_sizes={"L1": 16000}, buffering="double"), host)
    state = deployer.compilation.results[TilingState]
    tiles = {p.layers[-1]: p.tile for p in deployer.compilation.results[TilingSolution].patterns}
    assert state.patterns, f"{peer.name} fuses at L1 16000"
    models = {model.name: model for model in deployer.layer_models()}
    planner = solving.planner(deployer.setup, list(models.values()))
    for pattern in state.patterns:
        model = pattern_model(pattern, [models[name] for name in pattern.names], 2)
        assert model is not None
        tile = tiles[pattern.key]
        boxes = pattern_boxes(pattern, deployer.ctxt, planner.constraints_of(pattern), tile)
        for term in model.tensors:
            position, block = term.block.split(":", 1)
            if block.startswith("(") or not block.startswith("in"):
                continue  # scratch and the last output are sized like layer-wise tiling's
            index = int(block[2:])
            real = max(math.prod(b - a for a, b in inputs[index]) for _, inputs in boxes[int(position)])
            bound = math.prod(e.size_of(tile.get(e.axis, model.out_shape[e.axis])) if e.axis is not None else e.full
                              for e in term.extents)
            assert bound >= real, (pattern.names, term.block, bound, real)


def test_halo_overhead_counts_only_elements_some_tile_computes() -> None:
    """A strided consumer may skip rows of its input: those are not "computed less than once" (no negative
    overhead), and overlapping tiles count each element once in the covered total."""
    from deeploy_core.tiling.fusion.boxes import _covered

    gaps = [((0, 1), (0, 2), (0, 4)), ((0, 1), (0, 2), (6, 10))]    # rows 4 and 5 never read
    assert _covered(gaps) == 1 * 2 * 8
    overlap = [((0, 1), (0, 6)), ((0, 1), (4, 10))]                   # a two-column halo
    assert _covered(overlap) == 10
    assert PatternCost(0, 0, computed=12, intermediate=_covered(overlap), tiles=2).halo_overhead == pytest.approx(0.2)
    assert PatternCost(0, 0, computed=16, intermediate=_covered(gaps), tiles=2).halo_overhead == 0.0


def test_a_tensor_a_view_also_reads_is_not_fused_away(tmp_path) -> None:
    """relu reads conv's output, and so does a Reshape (a view, which the tiler does not tile): fusing conv -> relu
    would leave the view without the home copy it points into, so the two stay apart."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from deeploy_core.api import CompileOptions, compile_model
    from deeploy_core.plugins import PluginHost

    generic_c = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C platform plugin is not installed")
    weights = numpy_helper.from_array(np.full((4, 2, 3, 3), 0.1, dtype=np.float32), "w")
    shape = numpy_helper.from_array(np.array([1, -1], dtype=np.int64), "shape")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Reshape", ["c", "shape"], ["flat"], name="view")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 16, 16])],
                              [helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 4, 16, 16]),
                               helper.make_tensor_value_info("flat", TensorProto.FLOAT, [1, 1024])],
                              initializer=[weights, shape])
    model = tmp_path / "view.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    host = PluginHost()
    host.add_plugin(generic_c, name="generic-c")
    _, generated = compile_model(model, CompileOptions(platform="generic-c", level_sizes={"L1": 64000}), host)
    assert [layer["op"] for layer in generated.report["layers"]][:2] == ["Conv", "Relu"]
    assert generated.report["tiling"]["patterns"] == []
