"""Recurrent layers: ONNX LSTM, GRU and RNN (float32), as one runtime kernel call each (``dcg_recurrent.h``).

Keyword-spotting, sensor and audio models exported from PyTorch carry their
recurrences as single ``LSTM``/``GRU``/``RNN`` nodes.  A recurrence is inherently
sequential over time, so the kernel is one call that walks every (direction,
batch row) pair through its sequence, keeping that row's state in a small
scratch buffer; the scratch size depends only on the hidden size, which keeps
the arena independent of batch and sequence length.

Everything ONNX defines is taken: forward/reverse/bidirectional, optional
``B``, ``sequence_lens`` (constant or runtime), ``initial_h``/``initial_c``,
peepholes ``P``, ``input_forget``, ``linear_before_reset``, ``clip``, both
layouts, every output optional, and any of the eleven ONNX activation
functions (``activation_alpha``/``activation_beta`` read as ONNX Runtime reads
them).  The weights may be runtime tensors (ONNX's node tests feed them as
inputs).

In QDQ models the parameters (W, R, B, P) may be int8 constants that
:class:`~deeploy_generic_c.lowering_recurrent.RecurrentInt8Parameters` took
from behind their DequantizeLinear nodes: the node then lists their scales and
zero points, and the kernel (``dcg_*_mixed_f32``) dequantises each element as
it reads it instead of reading a float copy from the arena.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.lowering_recurrent import PARAMETER_INPUTS, SCALES, ZERO_POINTS
from deeploy_generic_c.parsing.common import c_float

HEADERS = ("dcg_recurrent.h",)

@dataclass(frozen=True)
class ActivationKind:
    """An ONNX recurrent activation as the kernel knows it: its code and which of alpha/beta it reads."""

    code: int
    alpha: float | None = None
    beta: float | None = None


ACTIVATIONS = {
    "sigmoid": ActivationKind(0), "tanh": ActivationKind(1), "relu": ActivationKind(2), "softsign": ActivationKind(3),
    "softplus": ActivationKind(4), "affine": ActivationKind(5, 0.0, 0.0), "leakyrelu": ActivationKind(6, 0.01),
    "thresholdedrelu": ActivationKind(7, 0.0), "scaledtanh": ActivationKind(8, 0.0, 0.0),
    "hardsigmoid": ActivationKind(9, 0.2, 0.5), "elu": ActivationKind(10, 1.0),
}
"""The kernel's activations (``DCG_RNN_*``) keyed by the ONNX name in lower case, with the alpha/beta each one
reads and its value when ``activation_alpha``/``activation_beta`` run out.  ONNX leaves those defaults open;
these are ONNX Runtime's (LeakyRelu 0.01, HardSigmoid 0.2/0.5, Elu 1.0, otherwise 0), so that validation agrees."""

DIRECTIONS = {"forward": (1, 0), "reverse": (1, 1), "bidirectional": (2, 0)}
"""ONNX ``direction`` -> (number of directions, single direction runs backwards)."""


@dataclass(frozen=True)
class Recurrence:
    """What the recurrence parsers share: the node's geometry, its optional tensors and the C arguments."""

    seq_length: int
    batch: int
    input_size: int
    hidden: int
    directions: int
    reverse: int
    layout: int
    clip: float

    def geometry(self) -> str:
        """The ``dcg_rnn_geometry`` record as a C99 compound literal."""
        return (f"&(const dcg_rnn_geometry){{{self.seq_length}, {self.batch}, {self.input_size}, {self.hidden}, "
                f"{self.directions}, {self.reverse}, {self.layout}, {c_float(self.clip)}}}")

    def state_shape(self) -> tuple[int, ...]:
        """Shape of initial_h/initial_c/Y_h/Y_c in this layout."""
        if self.layout:
            return (self.batch, self.directions, self.hidden)
        return (self.directions, self.batch, self.hidden)

    def output_shape(self) -> tuple[int, ...]:
        """Shape of Y in this layout."""
        if self.layout:
            return (self.batch, self.seq_length, self.directions, self.hidden)
        return (self.seq_length, self.directions, self.batch, self.hidden)


def read_recurrence(node: gs.Node, ctxt: NetworkContext, gates: int) -> Recurrence:
    """Geometry of an LSTM (``gates`` = 4), GRU (3) or RNN (1) node, with every shape checked against ONNX's rules."""
    direction = str(NodeParser.attribute(node, "direction", "forward"))
    if direction not in DIRECTIONS:
        raise NodeMismatch("attribute", f"direction={direction!r} is not one of forward, reverse, bidirectional")
    directions, reverse = DIRECTIONS[direction]
    layout = int(NodeParser.attribute(node, "layout", 0))
    if layout not in (0, 1):
        raise NodeMismatch("attribute", f"layout={layout} is not 0 or 1")
    x, w, r = (ctxt[node.inputs[i].name] for i in range(3))
    if len(x.shape) != 3:
        raise NodeMismatch("shape", f"X has shape {list(x.shape)}, expected rank 3")
    seq_length, batch = (x.shape[1], x.shape[0]) if layout else (x.shape[0], x.shape[1])
    input_size = x.shape[2]
    hidden = int(NodeParser.attribute(node, "hidden_size", 0) or (r.shape[-1] if r.shape else 0))
    _expect(w, (directions, gates * hidden, input_size), "W")
    _expect(r, (directions, gates * hidden, hidden), "R")
    if NodeParser.is_present(node, 3):
        _expect(ctxt[node.inputs[3].name], (directions, 2 * gates * hidden), "B")
    if NodeParser.is_present(node, 4):
        _expect(ctxt[node.inputs[4].name], (batch,), "sequence_lens")
    clip = float(NodeParser.attribute(node, "clip", 0.0) or 0.0)
    if clip < 0:
        raise NodeMismatch("attribute", f"clip={clip} must be positive")
    recurrence = Recurrence(seq_length, batch, input_size, hidden, directions, reverse, layout, clip)
    for index in range(5, len(node.inputs)):
        if index <= 6 and NodeParser.is_present(node, index):
            _expect(ctxt[node.inputs[index].name], recurrence.state_shape(), ("initial_h", "initial_c")[index - 5])
    return recurrence


def _expect(buffer: Buffer, shape: tuple[int, ...], what: str) -> None:
    if tuple(buffer.shape) != shape:
        raise NodeMismatch("shape", f"{what} has shape {list(buffer.shape)}, expected {list(shape)}")


def activation_list(node: gs.Node, per_direction: tuple[str, ...], directions: int) -> str:
    """The node's ``activations`` (ONNX's defaults when absent) as a C array of ``dcg_rnn_activation``.

    ``activation_alpha`` and ``activation_beta`` are consumed in the order of
    the functions, each list only by the functions that take that parameter
    (as ONNX Runtime reads them); a function past the end of a list gets its
    default.
    """
    names = NodeParser.attribute(node, "activations", None) or list(per_direction) * directions
    if len(names) != len(per_direction) * directions:
        expected = len(per_direction) * directions
        raise NodeMismatch("attribute", f"activations lists {len(names)} functions, expected {expected} "
                                        f"({', '.join(per_direction)} per direction)")
    alphas = [float(v) for v in NodeParser.attribute(node, "activation_alpha", None) or []]
    betas = [float(v) for v in NodeParser.attribute(node, "activation_beta", None) or []]
    entries = []
    for name in names:
        kind = ACTIVATIONS.get(str(name).lower())
        if kind is None:
            raise NodeMismatch("attribute", f"activations: {name} is not an ONNX recurrent activation")
        alpha = (alphas.pop(0) if alphas else kind.alpha) if kind.alpha is not None else 0.0
        beta = (betas.pop(0) if betas else kind.beta) if kind.beta is not None else 0.0
        entries.append(f"{{{kind.code}, {c_float(alpha)}, {c_float(beta)}}}")
    return "(const dcg_rnn_activation[]){" + ", ".join(entries) + "}"


def optional_name(node: gs.Node, ctxt: NetworkContext, index: int) -> str:
    """The C name of optional input ``index``, ``NULL`` when absent."""
    return ctxt[node.inputs[index].name].c_name if NodeParser.is_present(node, index) else "NULL"


def input_arguments(node: gs.Node, ctxt: NetworkContext, count: int) -> tuple[str, list[str]]:
    """The kernel's name suffix and its input arguments: plain float pointers, or ``dcg_rnn_tensor`` records when
    some parameters are int8 (then each parameter is a record, float or int8, and ``NULL`` when absent)."""
    scales = [float(v) for v in NodeParser.attribute(node, SCALES, None) or []]
    zero_points = [int(v) for v in NodeParser.attribute(node, ZERO_POINTS, None) or []]
    names = [ctxt[node.inputs[i].name].c_name for i in range(3)]
    names += [optional_name(node, ctxt, i) for i in range(3, count)]
    parameters = [index for index in PARAMETER_INPUTS[node.op] if index < count and NodeParser.is_present(node, index)]
    for index in parameters:
        if not (index < len(scales) and scales[index]) and ctxt[node.inputs[index].name].dtype != dtypes.FLOAT32:
            raise NodeMismatch("dtype", f"input {index} is {ctxt[node.inputs[index].name].dtype}, the kernel takes "
                                        "float32 or int8 behind a per-tensor DequantizeLinear")
    if not any(scales):
        return "f32", names
    for index in parameters:
        if index < len(scales) and scales[index]:
            if ctxt[node.inputs[index].name].dtype != dtypes.INT8:
                raise NodeMismatch("dtype", f"input {index} has a dequantisation scale but is not int8")
            names[index] = (f"&(const dcg_rnn_tensor){{NULL, {names[index]}, {c_float(scales[index])}, "
                            f"{zero_points[index]}}}")
        else:
            names[index] = f"&(const dcg_rnn_tensor){{{names[index]}, NULL, 0.0f, 0}}"
    return "mixed_f32", names


def optional_output(node: gs.Node, ctxt: NetworkContext, index: int, shape: tuple[int, ...], what: str) -> str:
    """The C name of optional output ``index`` (checked against its ONNX shape), ``NULL`` when absent."""
    if len(node.outputs) <= index or not node.outputs[index].name:
        return "NULL"
    buffer = ctxt[node.outputs[index].name]
    _expect(buffer, shape, what)
    return buffer.c_name


class LSTMParser(NodeParser):
    """Every direction, optional B, sequence_lens, initial_h/c, peepholes, clip, input_forget, layouts, activations."""

    inputs = (3, 8)
    outputs = (1, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        rec = read_recurrence(node, ctxt, 4)
        if NodeParser.is_present(node, 7):
            _expect(ctxt[node.inputs[7].name], (rec.directions, 3 * rec.hidden), "P")
        activations = activation_list(node, ("Sigmoid", "Tanh", "Tanh"), rec.directions)
        input_forget = int(NodeParser.attribute(node, "input_forget", 0))
        outputs = [
            optional_output(node, ctxt, 0, rec.output_shape(), "Y"),
            optional_output(node, ctxt, 1, rec.state_shape(), "Y_h"),
            optional_output(node, ctxt, 2, rec.state_shape(), "Y_c"),
        ]
        suffix, inputs = input_arguments(node, ctxt, 8)
        args = ", ".join([rec.geometry(), *inputs, str(input_forget), activations, *outputs])
        macs = rec.directions * rec.batch * rec.seq_length * 4 * rec.hidden * (rec.input_size + rec.hidden)
        return {"kernel": f"dcg_lstm_{suffix}", "args": args, "scratch_bytes": 6 * rec.hidden * 4, "scratch": "NULL",
                "macs": macs, "size": rec.directions * rec.batch * rec.seq_length * rec.hidden}


class GRUParser(NodeParser):
    """Every direction, optional B, sequence_lens, initial_h, linear_before_reset 0/1, clip, layout 0/1, activations."""

    inputs = (3, 6)
    outputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        rec = read_recurrence(node, ctxt, 3)
        activations = activation_list(node, ("Sigmoid", "Tanh"), rec.directions)
        linear_before_reset = int(NodeParser.attribute(node, "linear_before_reset", 0))
        outputs = [
            optional_output(node, ctxt, 0, rec.output_shape(), "Y"),
            optional_output(node, ctxt, 1, rec.state_shape(), "Y_h"),
        ]
        suffix, inputs = input_arguments(node, ctxt, 6)
        args = ", ".join([rec.geometry(), *inputs, str(linear_before_reset), activations, *outputs])
        macs = rec.directions * rec.batch * rec.seq_length * 3 * rec.hidden * (rec.input_size + rec.hidden)
        return {"kernel": f"dcg_gru_{suffix}", "args": args, "scratch_bytes": 5 * rec.hidden * 4, "scratch": "NULL",
                "macs": macs, "size": rec.directions * rec.batch * rec.seq_length * rec.hidden}


class RNNParser(NodeParser):
    """Every direction, optional B, sequence_lens, initial_h, clip, layout 0/1, activations."""

    inputs = (3, 6)
    outputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        rec = read_recurrence(node, ctxt, 1)
        activations = activation_list(node, ("Tanh",), rec.directions)
        outputs = [
            optional_output(node, ctxt, 0, rec.output_shape(), "Y"),
            optional_output(node, ctxt, 1, rec.state_shape(), "Y_h"),
        ]
        suffix, inputs = input_arguments(node, ctxt, 6)
        args = ", ".join([rec.geometry(), *inputs, activations, *outputs])
        macs = rec.directions * rec.batch * rec.seq_length * rec.hidden * (rec.input_size + rec.hidden)
        return {"kernel": f"dcg_rnn_{suffix}", "args": args, "scratch_bytes": 2 * rec.hidden * 4, "scratch": "NULL",
                "macs": macs, "size": rec.directions * rec.batch * rec.seq_length * rec.hidden}


def _scratch(representation: OperatorRepresentation) -> dict[str, int]:
    return {"scratch": int(representation["scratch_bytes"])}


RECURRENCE = NodeTemplate("${kernel}(${args}, (float *)${scratch});", headers=HEADERS, transients=_scratch)

F32 = dtypes.FLOAT32


def _mapper(op: str, parser: NodeParser, inputs: int, outputs: int) -> tuple[NodeMapper, ...]:
    """Float parameters, or (after RecurrentInt8Parameters) any mix of float and int8 parameters."""
    floats = (F32, F32, F32, F32, dtypes.INT32, F32, F32, F32)[:inputs]
    mixed = tuple(None if index in PARAMETER_INPUTS[op] else dtype for index, dtype in enumerate(floats))
    return (NodeMapper(parser, (NodeBinding(NodeTypeChecker(floats, (F32,) * outputs), RECURRENCE),
                                NodeBinding(NodeTypeChecker(mixed, (F32,) * outputs), RECURRENCE)),
                       name=f"{op} float32"),)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "LSTM": _mapper("LSTM", LSTMParser(), 8, 3),
    "GRU": _mapper("GRU", GRUParser(), 6, 2),
    "RNN": _mapper("RNN", RNNParser(), 6, 2),
}
