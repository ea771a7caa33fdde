"""LSTM, GRU and RNN (issue 19, item 3) against ONNX Runtime on generic-c and pulp-cluster.

Each case is a one-node model with random weights built with onnx.helper,
chosen so that every ONNX feature of the kernels changes the result: each
direction, bias present or absent, ``sequence_lens`` shorter than the
sequence (the padded steps of ``Y`` must be zeros, the states stop early),
initial states (also as a runtime input), peepholes, ``input_forget``,
``clip``, ``linear_before_reset``, non-default activations (with their
``activation_alpha``/``activation_beta``, and the defaults when those run out),
absent ``Y``, several hidden sizes and batch > 1.  ONNX Runtime has no
batch-major (``layout = 1``) kernel, so those cases are judged against the
same weights run in layout 0 by ONNX Runtime, transposed.

The recurrences run untiled on the cluster (no tile constraint: a layer with
several outputs is one tile), so the cluster cases check that path too.

QDQ: ``quantize_static`` (QDQ, per-tensor) leaves LSTM, GRU and RNN in float by
default (they are not in its QDQ registry: weights stay float, only the ops
around them are quantised); asked to quantise them through
``op_types_to_quantize`` it puts W, R and B behind DequantizeLinear and the
recurrence's input and outputs through QuantizeLinear/DequantizeLinear.  Both
forms compile in both quantisation modes; in the second the weights stay int8
constants that the kernel dequantises as it reads them (no float copy of them
in the arena), with DequantizeLinear's arithmetic.  The recurrence itself stays a
float32 layer, so a QuantizeLinear after it can land one step away from ONNX
Runtime when the float result sits within rounding error of a tie: the tests
hold both modes to one step (measured: no difference on these inputs).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.fuzz.rounding import judged_outputs
from deeploy_core.validate import Toolchain, build_executable, compare_outputs, run_network
from deeploy_core.validate.reference import run_reference
from deeploy_generic_c import plugin as generic_c_plugin

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


@dataclass(frozen=True)
class Case:
    """One recurrent node: its attributes, which optional inputs it has, which outputs it keeps."""

    op: str
    direction: str = "forward"
    hidden: int = 8
    input_size: int = 5
    seq: int = 6
    batch: int = 3
    bias: bool = True
    sequence_lens: tuple[int, ...] | None = None
    initial: bool = False
    initial_runtime: bool = False
    peepholes: bool = False
    outputs: tuple[str, ...] = ("Y", "Y_h", "Y_c")
    layout: int = 0
    attrs: dict[str, object] = field(default_factory=dict)

    @property
    def directions(self) -> int:
        return 2 if self.direction == "bidirectional" else 1

    def state_shape(self) -> list[int]:
        if self.layout:
            return [self.batch, self.directions, self.hidden]
        return [self.directions, self.batch, self.hidden]

    def input_shape(self) -> list[int]:
        return [self.batch, self.seq, self.input_size] if self.layout else [self.seq, self.batch, self.input_size]

    def output_shapes(self) -> dict[str, list[int]]:
        y = [self.batch, self.seq, self.directions, self.hidden] if self.layout else \
            [self.seq, self.directions, self.batch, self.hidden]
        return {"Y": y, "Y_h": self.state_shape(), "Y_c": self.state_shape()}


def recurrent_model(case: Case, seed: int = 0) -> onnx.ModelProto:
    """The node of ``case`` with random weights (initial states random too; a runtime input when asked)."""
    rng = np.random.default_rng(seed)
    gates, hidden, dirs = GATES[case.op], case.hidden, case.directions

    def weights(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    initializers = [numpy_helper.from_array(weights(dirs, gates * hidden, case.input_size), "W"),
                    numpy_helper.from_array(weights(dirs, gates * hidden, hidden), "R")]
    names = ["x", "W", "R", "", "", ""] + (["", ""] if case.op == "LSTM" else [])
    if case.bias:
        initializers.append(numpy_helper.from_array(weights(dirs, 2 * gates * hidden), "B"))
        names[3] = "B"
    if case.sequence_lens is not None:
        initializers.append(numpy_helper.from_array(np.array(case.sequence_lens, np.int32), "sequence_lens"))
        names[4] = "sequence_lens"
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, case.input_shape())]
    if case.initial:
        states = ["initial_h", "initial_c"] if case.op == "LSTM" else ["initial_h"]
        for index, name in enumerate(states):
            names[5 + index] = name
            if case.initial_runtime:
                inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, case.state_shape()))
            else:
                # Drawn sequence-major, so that a layout 1 case holds the same states as its layout 0 twin.
                state = weights(dirs, case.batch, hidden)
                initializers.append(numpy_helper.from_array(state.transpose(1, 0, 2).copy() if case.layout else state, name))
    if case.peepholes:
        initializers.append(numpy_helper.from_array(weights(dirs, 3 * hidden), "P"))
        names[7] = "P"
    while names and not names[-1]:
        names.pop()
    kept = ("Y", "Y_h", "Y_c") if case.op == "LSTM" else ("Y", "Y_h")
    outputs = [name if name in case.outputs else "" for name in kept]
    while not outputs[-1]:
        outputs.pop()
    node = helper.make_node(case.op, names, outputs, name=case.op.lower(), hidden_size=hidden,
                            direction=case.direction, **({"layout": 1} if case.layout else {}), **case.attrs)
    shapes = case.output_shapes()
    graph = helper.make_graph(
        [node], f"{case.op.lower()}_case", inputs,
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shapes[name]) for name in outputs if name],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model, full_check=True)
    return model


def case_inputs(case: Case, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    data = {"x": rng.standard_normal(case.input_shape()).astype(np.float32)}
    if case.initial and case.initial_runtime:
        for name in (["initial_h", "initial_c"] if case.op == "LSTM" else ["initial_h"]):
            data[name] = (rng.standard_normal(case.state_shape()) * 0.5).astype(np.float32)
    return data


CASES: dict[str, Case] = {
    "lstm forward h8 bias": Case("LSTM"),
    "lstm reverse h4 no-bias lens initial": Case("LSTM", direction="reverse", hidden=4, bias=False,
                                                 sequence_lens=(6, 3, 1), initial=True, outputs=("Y", "Y_h")),
    "lstm bidirectional h16 peepholes lens initial": Case("LSTM", direction="bidirectional", hidden=16,
                                                          sequence_lens=(2, 6, 5), initial=True, peepholes=True),
    "lstm forward h1 batch1 peepholes runtime-initial": Case("LSTM", hidden=1, batch=1, peepholes=True, initial=True,
                                                             initial_runtime=True),
    "lstm forward only Y_h": Case("LSTM", hidden=6, outputs=("Y_h",)),
    "lstm clip input_forget": Case("LSTM", hidden=5, peepholes=True, attrs={"clip": 0.7, "input_forget": 1}),
    "lstm bidirectional activations": Case("LSTM", direction="bidirectional", hidden=4, attrs={
        "activations": ["Sigmoid", "Relu", "Softsign", "Sigmoid", "Softplus", "Tanh"]}),
    "lstm bidirectional activations with alpha and beta": Case("LSTM", direction="bidirectional", hidden=4, attrs={
        "activations": ["HardSigmoid", "LeakyRelu", "ScaledTanh", "Sigmoid", "Elu", "Affine"],
        "activation_alpha": [0.25, 0.2, 0.9, 0.8, 0.5], "activation_beta": [0.45, 1.1, 0.1]}),
    "gru forward h8 bias": Case("GRU", outputs=("Y", "Y_h")),
    "gru activations with default alpha and beta": Case("GRU", hidden=5, outputs=("Y", "Y_h"), attrs={
        "activations": ["HardSigmoid", "ThresholdedRelu"]}),
    "gru forward lbr lens initial": Case("GRU", sequence_lens=(6, 4, 2), initial=True, outputs=("Y", "Y_h"),
                                         attrs={"linear_before_reset": 1}),
    "gru reverse lbr no-bias h4": Case("GRU", direction="reverse", hidden=4, bias=False, outputs=("Y", "Y_h"),
                                       attrs={"linear_before_reset": 1}),
    "gru bidirectional h12 lens initial clip": Case("GRU", direction="bidirectional", hidden=12,
                                                    sequence_lens=(1, 6, 3), initial=True, outputs=("Y", "Y_h"),
                                                    attrs={"clip": 0.8}),
    "gru forward only Y_h runtime-initial": Case("GRU", hidden=3, batch=2, initial=True, initial_runtime=True,
                                                 outputs=("Y_h",)),
    "gru bidirectional activations": Case("GRU", direction="bidirectional", hidden=4, outputs=("Y", "Y_h"), attrs={
        "activations": ["Sigmoid", "Softsign", "Sigmoid", "Relu"]}),
    "rnn forward h8 bias": Case("RNN", outputs=("Y", "Y_h")),
    "rnn bidirectional h6 lens initial clip": Case("RNN", direction="bidirectional", hidden=6, sequence_lens=(4, 6, 1),
                                                   initial=True, outputs=("Y", "Y_h"), attrs={"clip": 0.9}),
    "rnn bidirectional activations running out of alpha": Case("RNN", direction="bidirectional", hidden=4,
                                                               outputs=("Y", "Y_h"), attrs={
        "activations": ["LeakyRelu", "Elu"], "activation_alpha": [0.3]}),
    "rnn reverse relu no-bias only Y_h": Case("RNN", direction="reverse", hidden=5, bias=False, outputs=("Y_h",),
                                              attrs={"activations": ["Relu"]}),
}

LAYOUT_ONE: dict[str, Case] = {
    "lstm bidirectional layout 1": Case("LSTM", direction="bidirectional", hidden=4, batch=2, sequence_lens=(5, 3),
                                        initial=True, peepholes=True, layout=1),
    "rnn forward layout 1": Case("RNN", hidden=3, batch=2, sequence_lens=(2, 6), initial=True, outputs=("Y", "Y_h"),
                                 layout=1),
    "gru reverse layout 1": Case("GRU", direction="reverse", hidden=5, batch=3, initial=True, outputs=("Y", "Y_h"),
                                 layout=1, attrs={"linear_before_reset": 1}),
}

PLATFORMS = ("generic-c", "pulp-cluster")


@pytest.fixture(scope="module")
def recurrent_host() -> PluginHost:
    """generic-c and pulp-cluster (which runs generic-c's kernels on its emulated cluster)."""
    from deeploy_pulp_cluster import plugin as pulp_cluster_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return host


def _check(comparisons: list, expected_count: int) -> None:
    assert len(comparisons) == expected_count
    for comparison in comparisons:
        assert comparison.ok and not comparison.too_small, comparison
        assert comparison.cosine > 0.99999, comparison


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_recurrence_matches_onnx_runtime(name: str, platform: str, recurrent_host: PluginHost, runtime_cache: Path,
                                         tmp_path: Path) -> None:
    case = CASES[name]
    path = tmp_path / "model.onnx"
    onnx.save(recurrent_model(case), path)
    generated, result = validate_with_data(path, CompileOptions(platform=platform), recurrent_host, case_inputs(case),
                                           atol=2e-5, rtol=1e-4, cache_dir=runtime_cache)
    assert [layer["op"] for layer in generated.report["layers"]] == [case.op]
    _check(result.comparisons, len(case.outputs))
    if case.sequence_lens is not None and "Y" in case.outputs:
        # Steps past a row's length are zeros in Y (and ONNX Runtime agrees, checked above).
        y = result.outputs[0]
        for row, length in enumerate(case.sequence_lens):
            assert not y[length:, :, row].any() and y[:length, :, row].any()


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("name", sorted(LAYOUT_ONE))
def test_batch_major_layout_matches_the_sequence_major_result(name: str, platform: str, recurrent_host: PluginHost,
                                                              runtime_cache: Path, tmp_path: Path) -> None:
    case = LAYOUT_ONE[name]
    sequence_major = replace(case, layout=0)
    data = case_inputs(case)
    reference = run_reference(_saved(recurrent_model(sequence_major), tmp_path / "layout0.onnx"),
                              {"x": data["x"].transpose(1, 0, 2)})
    # Y [seq, dirs, batch, hidden] -> [batch, seq, dirs, hidden]; states [dirs, batch, hidden] -> [batch, dirs, hidden].
    expected = [reference[0].transpose(2, 0, 1, 3), *(state.transpose(1, 0, 2) for state in reference[1:])]
    path = _saved(recurrent_model(case), tmp_path / "layout1.onnx")
    _, result = validate_with_data(path, CompileOptions(platform=platform), recurrent_host, data, expected,
                                   atol=2e-5, rtol=1e-4, cache_dir=runtime_cache)
    _check(result.comparisons, len(case.outputs))


def _saved(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, path)
    return path


def test_unknown_activation_is_one_line_naming_node_op_and_attribute(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    case = Case("LSTM", hidden=4, outputs=("Y",), attrs={"activations": ["Gelu", "Tanh", "Tanh"]})
    path = _saved(recurrent_model(case), tmp_path / "hard_sigmoid.onnx")
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"}
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(path), "-o", str(tmp_path / "out")],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "'lstm'" in lines[0] and "(LSTM)" in lines[0] and "activations" in lines[0] and "Gelu" in lines[0]
    assert "Traceback" not in result.stderr


# -- QDQ ------------------------------------------------------------------------------------------------


def _sequence_classifier(op: str) -> onnx.ModelProto:
    """x -> recurrence -> Y_h -> MatMul: the shape of a small keyword-spotting head."""
    rng = np.random.default_rng(5)
    gates, hidden, features, classes = GATES[op], 8, 5, 4
    initializers = [
        numpy_helper.from_array((rng.standard_normal((1, gates * hidden, features)) * 0.4).astype(np.float32), "W"),
        numpy_helper.from_array((rng.standard_normal((1, gates * hidden, hidden)) * 0.4).astype(np.float32), "R"),
        numpy_helper.from_array((rng.standard_normal((1, 2 * gates * hidden)) * 0.2).astype(np.float32), "B"),
        numpy_helper.from_array((rng.standard_normal((hidden, classes)) * 0.5).astype(np.float32), "head"),
    ]
    nodes = [helper.make_node(op, ["x", "W", "R", "B"], ["Y", "Y_h"], name="recurrence", hidden_size=hidden),
             helper.make_node("MatMul", ["Y_h", "head"], ["scores"], name="head")]
    graph = helper.make_graph(nodes, "classifier", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 2, 5])],
                              [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2, classes])],
                              initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _quantised(op: str, directory: Path, quantise_recurrence: bool) -> Path:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Calibration(CalibrationDataReader):
        def __init__(self) -> None:
            rng = np.random.default_rng(0)
            self.batches = iter([{"x": rng.standard_normal((6, 2, 5)).astype(np.float32)} for _ in range(8)])

        def get_next(self) -> dict | None:
            return next(self.batches, None)

    source, target = directory / "float.onnx", directory / "qdq.onnx"
    onnx.save(_sequence_classifier(op), source)
    extra = {"op_types_to_quantize": [op, "MatMul"]} if quantise_recurrence else {}
    quantize_static(str(source), str(target), Calibration(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=False, **extra)
    return target


@pytest.mark.parametrize("quantise_recurrence", [False, True], ids=["default", "recurrence-quantised"])
@pytest.mark.parametrize("mode", ["exact", "fixed-point"])
@pytest.mark.parametrize("op", sorted(GATES))
def test_qdq_recurrent_classifier_within_one_step_of_onnx_runtime(
    op: str, mode: str, quantise_recurrence: bool, tmp_path: Path, recurrent_host: PluginHost, runtime_cache: Path
) -> None:
    model = _quantised(op, tmp_path, quantise_recurrence)
    graph = onnx.load(model).graph
    recurrence = next(node for node in graph.node if node.op_type == op)
    producers = {output: node.op_type for node in graph.node for output in node.output}
    # What quantize_static emits: by default the recurrence keeps float weights; asked to, it dequantises them.
    weight_producers = {producers.get(name) for name in recurrence.input[1:4]}
    assert weight_producers == ({"DequantizeLinear"} if quantise_recurrence else {None})
    _, generated = compile_model(model, CompileOptions(platform="generic-c", quantization=mode), recurrent_host)
    ops = [layer["op"] for layer in generated.report["layers"]]
    assert op in ops and "QLinearMatMul" in ops, ops
    # Quantised weights stay int8 constants read by the kernel: no DequantizeLinear layer copies them into the arena.
    assert "DequantizeLinear" not in {layer["op"] for layer in generated.report["layers"]
                                      if layer["inputs"][0]["name"] in {"W_quantized", "R_quantized", "B_quantized"}}
    assert ("_mixed_f32(" in generated.files["Network.c"]) == quantise_recurrence
    # One step is a bound by construction: the recurrence computes in float as ONNX Runtime does, so the head's
    # QLinearMatMul is the one layer rounding on its own (TFLite's arithmetic in fixed-point mode) before the output.
    names = [spec.name for spec in generated.outputs]
    assert judged_outputs(generated.report["layers"], names, mode) == names
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    rng = np.random.default_rng(77)
    for seed in range(10):
        inputs = {"x": rng.standard_normal((6, 2, 5)).astype(np.float32)}
        actual, _ = run_network(executable, generated, inputs, repeats=1)
        comparisons = compare_outputs(generated, actual, run_reference(model, inputs), 0.0, 0.0, lsb_tolerance=1.0)
        assert all(c.step for c in comparisons)
        assert all(c.ok for c in comparisons), (seed, [(c.name, c.max_lsb_error, c.mismatches) for c in comparisons])


# -- PyTorch exports --------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore")  # the exporters warn about tracing and their own deprecations, not about us
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["forward", "bidirectional"])
@pytest.mark.parametrize("exporter", ["legacy", "dynamo"])
def test_torch_export_matches_onnx_runtime(kind: str, bidirectional: bool, exporter: str, recurrent_host: PluginHost,
                                           runtime_cache: Path, tmp_path: Path) -> None:
    """A two-layer nn.LSTM / nn.GRU / nn.RNN classifier exported by the TorchScript and the dynamo exporter."""
    torch = pytest.importorskip("torch", reason="torch is not installed (the test extra 'models' installs it)")
    if exporter == "dynamo":
        pytest.importorskip("onnxscript", reason="the dynamo exporter needs onnxscript, which is not installed")

    class Classifier(torch.nn.Module):
        """nn.LSTM / nn.GRU / nn.RNN over a feature sequence, then a linear head on the last step (keyword spotting)."""

        def __init__(self) -> None:
            super().__init__()
            layer = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU, "RNN": torch.nn.RNN}[kind]
            self.recurrence = layer(10, 12, num_layers=2, batch_first=True, bidirectional=bidirectional)
            self.head = torch.nn.Linear(12 * (2 if bidirectional else 1), 5)

        def forward(self, x: Any) -> Any:
            sequence, _ = self.recurrence(x)
            return self.head(sequence[:, -1])

    torch.manual_seed(0)
    network = Classifier().eval()
    example = torch.randn(2, 7, 10)
    path = tmp_path / "torch.onnx"
    torch.onnx.export(network, (example,), str(path), input_names=["x"], output_names=["y"],
                      opset_version=18 if exporter == "dynamo" else 17, dynamo=exporter == "dynamo")
    ops = {node.op_type for node in onnx.load(path).graph.node}
    # The dynamo exporter decomposes nn.RNN into MatMul/Add/Tanh per step (no RNN node): that graph must run too.
    layers = 0 if exporter == "dynamo" and kind == "RNN" else 2
    assert (kind in ops) == bool(layers), ops
    data = {"x": np.random.default_rng(3).standard_normal((2, 7, 10)).astype(np.float32)}
    for platform in PLATFORMS:
        generated, result = validate_with_data(path, CompileOptions(platform=platform), recurrent_host, data,
                                               atol=2e-5, rtol=1e-4, cache_dir=runtime_cache)
        assert [layer["op"] for layer in generated.report["layers"]].count(kind) == layers
        _check(result.comparisons, 1)


def test_int8_recurrent_weights_are_not_dequantised_into_the_arena(tmp_path: Path, recurrent_host: PluginHost,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """RecurrentInt8Parameters: the arena of the quantised LSTM shrinks by the float copies of W, R and B."""
    from deeploy_generic_c.lowering_recurrent import RecurrentInt8Parameters

    model = _quantised("LSTM", tmp_path, quantise_recurrence=True)
    _, after = compile_model(model, CompileOptions(platform="generic-c"), recurrent_host)
    monkeypatch.setattr(RecurrentInt8Parameters, "apply_pass", lambda self, graph, results: None)
    _, before = compile_model(model, CompileOptions(platform="generic-c"), recurrent_host)
    dequantised = [layer["inputs"][0]["name"] for layer in before.report["layers"] if layer["op"] == "DequantizeLinear"]
    assert {"W_quantized", "R_quantized", "B_quantized"} <= set(dequantised)
    float_copies = 4 * (4 * 8 * 5 + 4 * 8 * 8 + 2 * 4 * 8)
    assert before.report["memory"]["arena_bytes"] - after.report["memory"]["arena_bytes"] >= float_copies - 64


def _hand_quantised(op: str) -> onnx.ModelProto:
    """A recurrence whose W (and P) come from int8 constants through DequantizeLinear while R and B stay float.

    Exercises the kernel's mixed records (float and int8 parameters in one call), a zero point, and a
    DequantizeLinear without one.
    """
    rng = np.random.default_rng(11)
    gates, hidden, features, dirs = GATES[op], 6, 4, 2
    initializers = [
        numpy_helper.from_array(rng.integers(-128, 128, (dirs, gates * hidden, features)).astype(np.int8), "W_q"),
        numpy_helper.from_array(np.array(0.011, np.float32), "W_scale"),
        numpy_helper.from_array(np.array(-7, np.int8), "W_zero"),
        numpy_helper.from_array((rng.standard_normal((dirs, gates * hidden, hidden)) * 0.4).astype(np.float32), "R"),
        numpy_helper.from_array((rng.standard_normal((dirs, 2 * gates * hidden)) * 0.2).astype(np.float32), "B"),
    ]
    nodes = [helper.make_node("DequantizeLinear", ["W_q", "W_scale", "W_zero"], ["W"], name="dequantize_w")]
    inputs = ["x", "W", "R", "B"]
    if op == "LSTM":
        initializers += [
            numpy_helper.from_array(rng.integers(-128, 128, (dirs, 3 * hidden)).astype(np.int8), "P_q"),
            numpy_helper.from_array(np.array(0.004, np.float32), "P_scale"),
        ]
        nodes.append(helper.make_node("DequantizeLinear", ["P_q", "P_scale"], ["P"], name="dequantize_p"))
        inputs += ["", "", "", "P"]
    outputs = ["Y", "Y_h"]
    nodes.append(helper.make_node(op, inputs, outputs, name="recurrence", hidden_size=hidden, direction="bidirectional"))
    graph = helper.make_graph(
        nodes, "hand_quantised", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 2, features])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [5, dirs, 2, hidden]),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [dirs, 2, hidden])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("op", sorted(GATES))
def test_mixed_int8_and_float_parameters_match_onnx_runtime(op: str, platform: str, recurrent_host: PluginHost,
                                                            runtime_cache: Path, tmp_path: Path) -> None:
    path = _saved(_hand_quantised(op), tmp_path / "hand.onnx")
    data = {"x": np.random.default_rng(4).standard_normal((5, 2, 4)).astype(np.float32)}
    generated, result = validate_with_data(path, CompileOptions(platform=platform), recurrent_host, data,
                                           atol=2e-5, rtol=1e-4, cache_dir=runtime_cache)
    assert [layer["op"] for layer in generated.report["layers"]] == [op]
    assert f"dcg_{op.lower()}_mixed_f32(" in generated.files["Network.c"]
    _check(result.comparisons, 2)
