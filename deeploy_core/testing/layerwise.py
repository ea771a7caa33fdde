"""Each quantised layer of a QDQ model, compiled alone and fed ONNX Runtime's own inputs, against its bound.

A network's outputs are held to one step only where at most one layer that
may round differently lies upstream (:mod:`deeploy_core.testing.fuzz.rounding`):
a step of difference entering a convolution comes out multiplied.  What holds
for every network is per layer, *given the same integer inputs*: a layer that
rounds as ONNX Runtime does (exact mode's float32 arithmetic, the integer
float32 emulation QOperator convolutions get, float fallbacks) equals ONNX
Runtime's tensor, and a layer that rounds on its own is within one step of
it.  In fixed-point mode every requantising layer is of the second kind:
TFLite's arithmetic (a 31-bit multiplier, rounded twice in convolutions,
once in MatMul/Gemm) against ONNX Runtime's float32 rounding.

This harness checks exactly that: it cuts the model at its quantised tensors
with ONNX's extractor, so each piece is one layer (the DequantizeLinear
nodes, the op, the QuantizeLinear), compiles and runs each piece on the
values ONNX Runtime computed for its inputs in the whole model, and compares
with the value ONNX Runtime computed for its output.  The bound of each piece
is read from the compiled layers' report rows
(:func:`~deeploy_core.testing.fuzz.rounding.tensor_rounding`), never from the
op's name alone, so a kernel reporting TFLite's arithmetic is held to one
step and one reporting ONNX Runtime's to none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx.utils import Extractor

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.fuzz.rounding import Rounding, tensor_rounding
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_core.validate.reference import run_reference


@dataclass(frozen=True)
class Layer:
    """One quantised layer: the tensors it starts from (quantised tensors or graph inputs) and the one it makes."""

    inputs: tuple[str, ...]
    output: str


@dataclass(frozen=True)
class LayerCheck:
    """How far the compiled layer is from ONNX Runtime over the inputs, and how far it may be."""

    layer: Layer
    ops: tuple[str, ...]
    """The compiled layers' ops (e.g. ``("QLinearConv",)``)."""
    arithmetic: tuple[str | None, ...]
    """Per compiled layer, the ``arithmetic`` (or ``rounding``) its report row names: ``"tflite"``,
    ``"float32"`` or None (a float fallback, a copy, a table, a 31-bit QOperator kernel)."""
    bound: int
    """0 (bit exact) or 1 step."""
    error: int
    """The largest ``|compiled - ONNX Runtime|`` in steps."""

    @property
    def ok(self) -> bool:
        return self.error <= self.bound


def quantised_layers(model: onnx.ModelProto) -> list[Layer]:
    """Every QuantizeLinear's output with the quantised tensors (or graph inputs) its computation starts from.

    Walking back from a QuantizeLinear's input through the nodes that
    produce it stops at the outputs of other QuantizeLinear nodes, at graph
    inputs and at constants: what lies between is the layer (its
    DequantizeLinear nodes, the op, any float ops the model put in between).
    """
    producers = {output: node for node in model.graph.node for output in node.output}
    quantised = {node.output[0] for node in model.graph.node if node.op_type == "QuantizeLinear"}
    constants = {tensor.name for tensor in model.graph.initializer}
    graph_inputs = {value.name for value in model.graph.input} - constants
    layers = []
    for node in model.graph.node:
        if node.op_type != "QuantizeLinear":
            continue
        starts: set[str] = set()
        pending, seen = [node.input[0]], set()
        while pending:
            name = pending.pop()
            if name in seen or not name:
                continue
            seen.add(name)
            if name in quantised or name in graph_inputs:
                starts.add(name)
            elif name in producers:
                pending.extend(producers[name].input)
        layers.append(Layer(tuple(sorted(starts)), node.output[0]))
    return layers


def reference_values(model_path: Path, inputs: dict[str, np.ndarray], folder: Path) -> dict[str, np.ndarray]:
    """ONNX Runtime's value of every graph input and quantised tensor (the model with those as extra outputs)."""
    model = onnx.shape_inference.infer_shapes(onnx.load(str(model_path)))
    types = {value.name: value for value in model.graph.value_info}
    present = {value.name for value in model.graph.output}
    model.graph.output.extend(types[layer.output] for layer in quantised_layers(model) if layer.output not in present)
    path = folder / f"{model_path.stem}_quantised_tensors.onnx"
    onnx.save(model, str(path))
    names = [value.name for value in model.graph.output]
    return {**inputs, **dict(zip(names, run_reference(path, inputs)))}


def check_layers(model_path: Path, options: CompileOptions, host: PluginHost, samples: Sequence[dict[str, np.ndarray]],
                 folder: Path, runtime_cache: Path | None = None, toolchain: Toolchain | None = None
                 ) -> list[LayerCheck]:
    """Every quantised layer of ``model_path`` compiled alone with ``options`` and checked on every sample."""
    folder.mkdir(parents=True, exist_ok=True)
    toolchain = toolchain or Toolchain.from_environment()
    references = [reference_values(model_path, sample, folder) for sample in samples]
    model = onnx.shape_inference.infer_shapes(onnx.load(str(model_path)))  # the extractor types its new inputs so
    extractor = Extractor(model)
    checks = []
    for index, layer in enumerate(quantised_layers(model)):
        piece = folder / f"layer_{index}.onnx"
        onnx.save(_with_shapes(extractor.extract_model(list(layer.inputs), [layer.output]), references[0]), str(piece))
        _, generated = compile_model(piece, replace(options, network_name=f"layer_{index}"), host)
        rounding = tensor_rounding(generated.report["layers"], options.quantization).get(layer.output, Rounding.EXACT)
        if rounding is Rounding.UNBOUNDED:
            raise ValueError(f"the layer making {layer.output!r} rounds more than once: it is not one layer")
        executable = build_executable(generated, folder / f"layer_{index}", toolchain, runtime_cache)
        error = 0
        for values in references:
            (actual,), _ = run_network(executable, generated, {name: values[name] for name in layer.inputs}, repeats=1)
            difference = np.abs(actual.astype(np.int64) - values[layer.output].astype(np.int64))
            error = max(error, int(difference.max(initial=0)))
        ops = tuple(str(entry["op"]) for entry in generated.report["layers"])
        checks.append(LayerCheck(layer, ops, tuple(map(_arithmetic, generated.report["layers"])), int(rounding), error))
    return checks


def _arithmetic(row: dict[str, Any]) -> str | None:
    """The arithmetic a report row names (``requantization.arithmetic`` or ``.rounding``), if any."""
    described = row.get("requantization")
    if not isinstance(described, dict):
        return None
    found = described.get("arithmetic", described.get("rounding"))
    return str(found) if found is not None else None


def _with_shapes(piece: onnx.ModelProto, values: dict[str, np.ndarray]) -> onnx.ModelProto:
    """The piece with its inputs and output shaped as ONNX Runtime's values are, and no inner shapes: the whole
    model's shape inference may have left dimensions symbolic (e.g. after a Slice), which the compiler would
    refuse as dynamic; from static inputs it infers them again."""
    del piece.graph.value_info[:]
    for value in (*piece.graph.input, *piece.graph.output):
        if value.name not in values:
            continue
        shape = values[value.name].shape
        value.type.tensor_type.shape.ClearField("dim")
        for size in shape:
            value.type.tensor_type.shape.dim.add().dim_value = int(size)
    return piece
