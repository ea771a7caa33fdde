"""``Loop`` nodes with a known number of iterations are unrolled in the front end (issue 30, item 5).

The networks are small GRU-like recurrences written as Keras 3 → tf2onnx writes its recurrent layers: the input
transposed to time-major outside the loop, read inside the body by ``Gather`` of the iteration number (or of an
int32 counter carried from step to step, as TensorFlow's ``while`` does), a hidden state carried through the
iterations, each step's state collected as a scan output; the condition is absent, or computed from the counters
(``i < 5 and time < 5``) with a trip count that is a constant or INT64_MAX.  Each is unrolled (no Loop left, one
copy per step with unique names), compiled, its C run, and compared with ONNX Runtime on generic-c and
pulp-cluster.  Loops whose iterations depend on the data, never end, are too long, or whose scan outputs change
shape from step to step are refused in one line that names the Loop and the reason, with exit code 2 from the CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.frontend import import_model
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.plugins import PluginHost

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
pytest.importorskip("deeploy_pulp_cluster", reason="the PULP cluster platform (plugins/pulp_cluster) is not installed")
from deeploy_generic_c import plugin as generic_c_plugin  # noqa: E402
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin  # noqa: E402

STEPS, FEATURES, HIDDEN = 5, 4, 6
INT64_MAX = np.iinfo(np.int64).max


def _constant(name: str, value: object, dtype: type) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, dtype)))


def gru_body(counter: bool, condition: str, scan: str = "h_new") -> onnx.GraphProto:
    """One step: h' = z * h + (1 - z) * tanh(x_t Wn + h Un), z = sigmoid(x_t Wz + h Uz).

    ``counter``: x_t is read by an int32 ``time`` carried and incremented each step (TensorFlow's while loop)
    instead of by the iteration number.  ``condition``: "pass" returns the incoming condition, "counters"
    computes ``i + 1 < STEPS and time + 1 < STEPS``, "data" compares the state's sum with a constant.
    """
    rng = np.random.default_rng(5)
    weights = [numpy_helper.from_array((rng.standard_normal(shape) * 0.5).astype(np.float32), name)
               for name, shape in (("Wz", (FEATURES, HIDDEN)), ("Uz", (HIDDEN, HIDDEN)),
                                   ("Wn", (FEATURES, HIDDEN)), ("Un", (HIDDEN, HIDDEN)))]
    index = "time" if counter else "i"
    nodes = [
        helper.make_node("Gather", ["xs", index], ["x_t"], axis=0, name="read_step"),
        helper.make_node("MatMul", ["x_t", "Wz"], ["xz"], name="xz"),
        helper.make_node("MatMul", ["h", "Uz"], ["hz"], name="hz"),
        helper.make_node("Add", ["xz", "hz"], ["z_in"], name="z_in"),
        helper.make_node("Sigmoid", ["z_in"], ["z"], name="z"),
        helper.make_node("MatMul", ["x_t", "Wn"], ["xn"], name="xn"),
        helper.make_node("MatMul", ["h", "Un"], ["hn"], name="hn"),
        helper.make_node("Add", ["xn", "hn"], ["n_in"], name="n_in"),
        helper.make_node("Tanh", ["n_in"], ["n"], name="n"),
        helper.make_node("Mul", ["z", "h"], ["kept"], name="kept"),
        _constant("one", 1.0, np.float32),
        helper.make_node("Sub", ["one", "z"], ["z_not"], name="z_not"),
        helper.make_node("Mul", ["z_not", "n"], ["fresh"], name="fresh"),
        helper.make_node("Add", ["kept", "fresh"], ["h_new"], name="h_new"),
        _constant("step", 1, np.int32),
        helper.make_node("Add", ["time", "step"], ["time_next"], name="time_next"),
    ]
    if condition == "counters":
        nodes += [_constant("one64", 1, np.int64), _constant("steps64", STEPS, np.int64),
                  _constant("steps32", STEPS, np.int32),
                  helper.make_node("Add", ["i", "one64"], ["i_next"]),
                  helper.make_node("Less", ["i_next", "steps64"], ["i_ok"]),
                  helper.make_node("Less", ["time_next", "steps32"], ["time_ok"]),
                  helper.make_node("And", ["i_ok", "time_ok"], ["cond_out"])]
    elif condition == "early":  # i + 1 < 3: three iterations whatever the trip count
        nodes += [_constant("one64", 1, np.int64), _constant("three", 3, np.int64),
                  helper.make_node("Add", ["i", "one64"], ["i_next"]),
                  helper.make_node("Less", ["i_next", "three"], ["cond_out"])]
    elif condition == "data":
        nodes += [helper.make_node("ReduceSum", ["h_new"], ["total"], keepdims=0),
                  _constant("limit", 100.0, np.float32),
                  helper.make_node("Less", ["total", "limit"], ["cond_out"])]
    else:
        nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    value = helper.make_tensor_value_info
    return helper.make_graph(
        nodes, "gru_step",
        [value("i", TensorProto.INT64, []), value("cond_in", TensorProto.BOOL, []),
         value("h", TensorProto.FLOAT, ["batch", HIDDEN]), value("time", TensorProto.INT32, [])],
        [value("cond_out", TensorProto.BOOL, []), value("h_new", TensorProto.FLOAT, ["batch", HIDDEN]),
         value("time_next", TensorProto.INT32, []), value(scan, TensorProto.FLOAT, None)],
        weights)


def recurrent_network(path: Path, *, trip: object = STEPS, counter: bool = False, condition: str = "pass",
                      outer_condition: bool = False, body: onnx.GraphProto | None = None, runs: int = STEPS) -> Path:
    """x [1, STEPS, FEATURES] → time-major → Loop (the GRU step) → last state (Relu) and every state (scan)."""
    nodes = [helper.make_node("Transpose", ["x"], ["xs"], perm=[1, 0, 2], name="time_major"),
             _constant("h0", np.zeros((1, HIDDEN)), np.float32), _constant("time0", 0, np.int32)]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, STEPS, FEATURES])]
    trip_name = ""
    if isinstance(trip, str):  # a graph input: known only at run time
        inputs.append(helper.make_tensor_value_info(trip, TensorProto.INT64, []))
        trip_name = trip
    elif trip is not None:
        nodes.append(_constant("trip", trip, np.int64))
        trip_name = "trip"
    condition_name = ""
    if outer_condition:  # tf2onnx: Less(0, 5) and Less(0, max) computed outside the loop
        nodes += [_constant("zero", 0.0, np.float32), _constant("steps", float(STEPS), np.float32),
                  helper.make_node("Less", ["zero", "steps"], ["less"]),
                  helper.make_node("And", ["less", "less"], ["cond0"])]
        condition_name = "cond0"
    nodes += [
        helper.make_node("Loop", [trip_name, condition_name, "h0", "time0"], ["h_last", "time_last", "states"],
                         name="while_loop", body=body or gru_body(counter, condition)),
        helper.make_node("Relu", ["h_last"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "recurrent", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, HIDDEN]),
                               helper.make_tensor_value_info("states", TensorProto.FLOAT, [runs, 1, HIDDEN])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)]), path)
    return path


VARIANTS = {
    "trip count, no condition": {},
    "counter index, tf2onnx condition": {"counter": True, "condition": "counters", "outer_condition": True},
    "INT64_MAX trip count, condition ends it": {"trip": INT64_MAX, "counter": True, "condition": "counters",
                                                "outer_condition": True},
    "condition only": {"trip": None, "counter": True, "condition": "counters", "outer_condition": True},
}


@pytest.fixture(scope="module")
def host() -> PluginHost:
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


@pytest.mark.parametrize("variant", VARIANTS)
def test_unrolled_into_one_copy_per_step(tmp_path: Path, variant: str) -> None:
    imported = import_model(recurrent_network(tmp_path / "m.onnx", **VARIANTS[variant]))
    ops = [node.op for node in imported.graph.nodes]
    assert "Loop" not in ops
    assert ops.count("Tanh") == STEPS and ops.count("Gather") == STEPS, ops
    names = [node.name for node in imported.graph.nodes if node.name]
    assert len(set(names)) == len(names)
    assert {f"while_loop/iter{step}/n" for step in range(STEPS)} <= set(names)
    assert [tensor.shape for tensor in imported.graph.outputs] == [[1, HIDDEN], [STEPS, 1, HIDDEN]]


@pytest.mark.parametrize("platform", ["generic-c", "pulp-cluster"])
@pytest.mark.parametrize("variant", ["trip count, no condition", "counter index, tf2onnx condition",
                                     "INT64_MAX trip count, condition ends it"])
def test_unrolled_network_matches_onnx_runtime(tmp_path: Path, host: PluginHost, platform: str, variant: str) -> None:
    path = recurrent_network(tmp_path / "m.onnx", **VARIANTS[variant])
    generated, result = validate_model(path, CompileOptions(platform=platform), host, repeats=1)
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    assert [spec.shape for spec in generated.outputs] == [(1, HIDDEN), (STEPS, 1, HIDDEN)]
    ops = {layer["op"] for layer in generated.report["layers"]}
    assert "Loop" not in ops and "Tanh" in ops


def test_a_condition_turning_false_stops_the_copies_as_onnx_runtime_does(tmp_path: Path, host: PluginHost) -> None:
    """No condition input, trip count 5, the body's condition false after the third step: ONNX Runtime runs three
    steps (ONNX's pseudo-code would ignore the body's condition), and so do the copies."""
    path = recurrent_network(tmp_path / "m.onnx", condition="early", runs=3)
    assert [node.op for node in import_model(path).graph.nodes].count("Tanh") == 3
    generated, result = validate_model(path, CompileOptions(platform="generic-c"), host, repeats=1)
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    assert [spec.shape for spec in generated.outputs] == [(1, HIDDEN), (3, 1, HIDDEN)]


def _refused(path: Path) -> str:
    with pytest.raises(ModelImportError) as caught:
        import_model(path)
    return str(caught.value)


PREFIX = "node 'while_loop' (Loop): Loop is supported only with a constant trip count and static shapes ("


def test_a_trip_count_from_the_input_is_refused_by_the_cli(tmp_path: Path) -> None:
    path = recurrent_network(tmp_path / "m.onnx", trip="steps")
    compiled = subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(path), "--platform", "generic-c",
                               "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"})
    assert compiled.returncode == 2
    assert compiled.stderr.splitlines() == [
        f"error: {PREFIX}the trip count 'steps' is not a constant: it is computed from graph input 'steps')"], \
        compiled.stderr


@pytest.mark.parametrize(("options", "reason"), [
    ({"condition": "data", "outer_condition": True},
     "the body's condition is not computed from constants: it is computed from graph input 'x'"),
    ({"trip": None}, "no trip count and a condition that never turns false: it would never end"),
    ({"trip": 10**9}, "1000000000 iterations of 17 body nodes are more than the 50000 nodes unrolling may add"),
    ({"trip": INT64_MAX, "counter": True, "condition": "pass"}, "more than the 50000 nodes unrolling may add"),
])
def test_other_loops_get_one_line_naming_the_reason(tmp_path: Path, options: dict, reason: str) -> None:
    message = _refused(recurrent_network(tmp_path / "m.onnx", **options))
    assert message.startswith(PREFIX) and reason in message and "\n" not in message, message


def test_a_scan_output_changing_shape_is_refused(tmp_path: Path) -> None:
    """Each step emits ``xs[:i + 1]``: one more row per step, which cannot be stacked."""
    body = gru_body(counter=False, condition="pass", scan="growing")
    body.node.extend([_constant("zero_start", [0], np.int64), _constant("one_end", [1], np.int64),
                      helper.make_node("Unsqueeze", ["i", "axes0"], ["i_1d"]),
                      helper.make_node("Add", ["i_1d", "one_end"], ["end"]),
                      helper.make_node("Slice", ["xs", "zero_start", "end"], ["growing"], name="grow")])
    body.node.insert(0, _constant("axes0", [0], np.int64))
    message = _refused(recurrent_network(tmp_path / "m.onnx", body=body))
    assert message.startswith(PREFIX) and "unrolled 5 times" in message, message
