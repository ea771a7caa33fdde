"""Write the bad-model corpus: models a user might hand the compiler that it must refuse cleanly.

Run ``python tests/corpus/make_bad_corpus.py [FOLDER]`` (default: ``tests/corpus/bad``).  Every case is made
here from ONNX's helper functions or from fixed bytes, so the corpus is reviewable as code and byte-identical
from run to run; ``tests/test_bad_model_corpus.py`` checks that the committed files are what this script writes
and that each one gives exit code 2 and a single error line naming what is wrong.

``cases.yaml`` lists each case with the words its error line must contain (the node, the op, the reason).
"""

from __future__ import annotations

import io
import json
import random
import shutil
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
import yaml
from onnx import TensorProto, helper, numpy_helper

DEFAULT_FOLDER = Path(__file__).resolve().parent / "bad"
OPSET = 17


@dataclass(frozen=True)
class Case:
    """One bad model: its file name, what is wrong, and what the error line must mention."""

    name: str
    what: str
    mentions: tuple[str, ...]
    write: Callable[[Path], None]
    extra_files: dict[str, bytes] = field(default_factory=dict)

    @property
    def file_name(self) -> str:
        return f"{self.name}.onnx"


def _value(name: str, shape: list[int | str] | None, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           initializers: list[onnx.TensorProto] | None = None, opsets: list[tuple[str, int]] | None = None,
           ir_version: int | None = None) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "bad", inputs, outputs, initializers or [])
    opset_ids = [helper.make_opsetid(domain, version) for domain, version in (opsets or [("", OPSET)])]
    model = helper.make_model(graph, opset_imports=opset_ids, producer_name="deeploy_core bad corpus")
    model.ir_version = ir_version if ir_version is not None else 8
    return model


def _weights(shape: tuple[int, ...], name: str = "W") -> onnx.TensorProto:
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) / 10.0
    return numpy_helper.from_array(values, name)


def _conv_model() -> onnx.ModelProto:
    """The well-formed model several cases start from: Conv → Relu."""
    return _model(
        [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        [_value("x", [1, 2, 6, 6])], [_value("y", [1, 3, 6, 6])], [_weights((3, 2, 3, 3))])


def _bytes(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


def _proto(build: Callable[[], onnx.ModelProto]) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(build().SerializeToString())


def _unary(op: str, elem: int, shape: list[int] | None = None, name: str = "node", **attributes: object
           ) -> onnx.ModelProto:
    shape = shape or [4]
    return _model([helper.make_node(op, ["x"], ["y"], name=name, **attributes)],
                  [_value("x", shape, elem)], [_value("y", shape, elem)])


# --- files that are not ONNX models -------------------------------------------------------------------------------

def _garbage() -> bytes:
    generator = random.Random(20261123)
    return bytes(generator.randrange(256) for _ in range(4096))


def _zip_archive() -> bytes:
    """What a PyTorch ``.pt`` file looks like: a zip archive (fixed timestamps for byte-identical output)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("archive/data.pkl", date_time=(2020, 1, 1, 0, 0, 0))
        archive.writestr(info, b"\x80\x04K\x01.")
    return buffer.getvalue()


def _truncated() -> bytes:
    data = _conv_model().SerializeToString()
    return data[: len(data) // 2]


def _tensor_proto() -> bytes:
    return _weights((2, 2)).SerializeToString()


def _no_graph() -> onnx.ModelProto:
    model = onnx.ModelProto()
    model.ir_version = 8
    model.opset_import.append(helper.make_opsetid("", OPSET))
    return model


def _directory(path: Path) -> None:
    path.mkdir()
    (path / "README").write_text("a folder named like a model\n", encoding="utf-8")


# --- graph structure ------------------------------------------------------------------------------------------------

def _cyclic() -> onnx.ModelProto:
    return _model([helper.make_node("Add", ["x", "b"], ["a"], name="loop_add"),
                   helper.make_node("Relu", ["a"], ["b"], name="loop_relu"),
                   helper.make_node("Identity", ["a"], ["y"], name="out")],
                  [_value("x", [4])], [_value("y", [4])])


def _dangling_input() -> onnx.ModelProto:
    return _model([helper.make_node("Add", ["x", "ghost"], ["y"], name="haunted_add")],
                  [_value("x", [4])], [_value("y", [4])])


def _missing_initializer() -> onnx.ModelProto:
    model = _conv_model()
    del model.graph.initializer[:]
    return model


def _output_not_produced() -> onnx.ModelProto:
    model = _conv_model()
    model.graph.output.append(_value("nowhere", [1, 3, 6, 6]))
    return model


def _no_outputs() -> onnx.ModelProto:
    model = _conv_model()
    del model.graph.output[:]
    return model


def _duplicate_tensor_names() -> onnx.ModelProto:
    return _model([helper.make_node("Relu", ["x"], ["t"], name="first_writer"),
                   helper.make_node("Sigmoid", ["x"], ["t"], name="second_writer"),
                   helper.make_node("Add", ["t", "t"], ["y"], name="sum")],
                  [_value("x", [4])], [_value("y", [4])])


def _duplicate_initializers() -> onnx.ModelProto:
    model = _conv_model()
    model.graph.initializer.append(_weights((3, 2, 3, 3)))
    return model


def _graph_input_reassigned() -> onnx.ModelProto:
    """A node writes a tensor that is already a graph input."""
    return _model([helper.make_node("Relu", ["x"], ["x"], name="overwrite_input"),
                   helper.make_node("Identity", ["x"], ["y"], name="out")],
                  [_value("x", [4])], [_value("y", [4])])


# --- shapes ---------------------------------------------------------------------------------------------------------

def _conv_with_input(shape: list[int | str] | None) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        model = _conv_model()
        model.graph.input[0].CopyFrom(_value("x", shape))
        return model
    return build


def _output_without_shape() -> onnx.ModelProto:
    model = _conv_model()
    model.graph.output[0].type.tensor_type.ClearField("shape")
    return model


def _no_input_type() -> onnx.ModelProto:
    model = _conv_model()
    model.graph.input[0].type.Clear()
    return model


def _sequence_input() -> onnx.ModelProto:
    sequence = helper.make_tensor_sequence_value_info("x", TensorProto.FLOAT, [4])
    return _model([helper.make_node("SequenceLength", ["x"], ["n"], name="length"),
                   helper.make_node("Cast", ["n"], ["y"], name="cast", to=TensorProto.FLOAT)],
                  [sequence], [_value("y", [])])


def _absurd_input() -> onnx.ModelProto:
    big = 1 << 20
    return _model([helper.make_node("Relu", ["x"], ["y"], name="huge_relu")],
                  [_value("x", [big, big, big])], [_value("y", [big, big, big])])


def _absurd_constant_of_shape() -> onnx.ModelProto:
    shape = numpy_helper.from_array(np.array([100000, 100000, 100000], np.int64), "shape")
    return _model([helper.make_node("ConstantOfShape", ["shape"], ["zeros"], name="make_zeros",
                                    value=numpy_helper.from_array(np.array([0.0], np.float32))),
                   helper.make_node("Add", ["x", "zeros"], ["y"], name="add_zeros")],
                  [_value("x", [1])], [_value("y", [100000, 100000, 100000])], [shape])


def _absurd_expand() -> onnx.ModelProto:
    shape = numpy_helper.from_array(np.array([1 << 16, 1 << 16, 1 << 16], np.int64), "shape")
    return _model([helper.make_node("Expand", ["x", "shape"], ["y"], name="blow_up")],
                  [_value("x", [1])], [_value("y", [1 << 16, 1 << 16, 1 << 16])], [shape])


def _initializer_claims_huge_dims() -> onnx.ModelProto:
    model = _model([helper.make_node("Add", ["x", "B"], ["y"], name="add_huge")],
                   [_value("x", [4])], [_value("y", [4])])
    tensor = TensorProto(name="B", data_type=TensorProto.FLOAT, dims=[1 << 30, 1 << 30])
    tensor.raw_data = np.zeros(4, np.float32).tobytes()
    model.graph.initializer.append(tensor)
    return model


def _initializer_short_data() -> onnx.ModelProto:
    model = _conv_model()
    model.graph.initializer[0].raw_data = model.graph.initializer[0].raw_data[:20]
    return model


# --- operators and attributes ---------------------------------------------------------------------------------------

def _unsupported_op() -> onnx.ModelProto:
    return _model([helper.make_node("Det", ["x"], ["y"], name="determinant")],
                  [_value("x", [2, 3, 3])], [_value("y", [2])])


def _unknown_default_op() -> onnx.ModelProto:
    return _unary("FluxCapacitor", TensorProto.FLOAT, name="time_travel")


def _custom_domain_op() -> onnx.ModelProto:
    return _model([helper.make_node("MagicGelu", ["x"], ["y"], name="magic", domain="com.example.ops")],
                  [_value("x", [4])], [_value("y", [4])], opsets=[("", OPSET), ("com.example.ops", 1)])


def _custom_domain_not_imported() -> onnx.ModelProto:
    return _model([helper.make_node("MagicGelu", ["x"], ["y"], name="magic", domain="com.example.ops")],
                  [_value("x", [4])], [_value("y", [4])])


def _control_flow() -> onnx.ModelProto:
    branch_out = _value("b", [4])
    then_graph = helper.make_graph([helper.make_node("Relu", ["x"], ["b"], name="then_relu")], "then", [], [branch_out])
    else_graph = helper.make_graph([helper.make_node("Neg", ["x"], ["b"], name="else_neg")], "else", [],
                                   [_value("b", [4])])
    return _model([helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_graph,
                                    else_branch=else_graph)],
                  [_value("cond", [], TensorProto.BOOL), _value("x", [4])], [_value("y", [4])])


def _loop_dynamic_trip_count() -> onnx.ModelProto:
    body = helper.make_graph([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                              helper.make_node("Add", ["acc", "x"], ["acc_out"], name="accumulate")], "body",
                             [_value("i", [], TensorProto.INT64), _value("cond_in", [], TensorProto.BOOL),
                              _value("acc", [4])],
                             [_value("cond_out", [], TensorProto.BOOL), _value("acc_out", [4])])
    return _model([helper.make_node("Loop", ["n", "", "x"], ["y"], name="counting", body=body)],
                  [_value("n", [], TensorProto.INT64), _value("x", [4])], [_value("y", [4])])


def _conv_attributes(**attributes: object) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        model = _conv_model()
        conv = model.graph.node[0]
        del conv.attribute[:]
        conv.attribute.extend(helper.make_attribute(key, value) for key, value in sorted(attributes.items()))
        return model
    return build


def _unknown_attribute() -> onnx.ModelProto:
    return _unary("Relu", TensorProto.FLOAT, name="relu_with_extra", slope=0.5)


def _missing_required_input() -> onnx.ModelProto:
    return _model([helper.make_node("Conv", ["x"], ["y"], name="conv_without_weights")],
                  [_value("x", [1, 2, 6, 6])], [_value("y", [1, 3, 6, 6])])


def _too_many_inputs() -> onnx.ModelProto:
    return _model([helper.make_node("Relu", ["x", "x"], ["y"], name="relu_two_inputs")],
                  [_value("x", [4])], [_value("y", [4])])


def _kernel_larger_than_input() -> onnx.ModelProto:
    return _model([helper.make_node("Conv", ["x", "W"], ["y"], name="wide_conv")],
                  [_value("x", [1, 2, 2, 2])], [_value("y", [1, 3, 1, 1])], [_weights((3, 2, 3, 3))])


# --- inconsistent shapes --------------------------------------------------------------------------------------------

def _binary(op: str, left: list[int], right: list[int], name: str) -> onnx.ModelProto:
    return _model([helper.make_node(op, ["a", "b"], ["y"], name=name)],
                  [_value("a", left), _value("b", right)], [_value("y", left)])


def _conv_channel_mismatch() -> onnx.ModelProto:
    return _model([helper.make_node("Conv", ["x", "W"], ["y"], name="mismatched_conv")],
                  [_value("x", [1, 3, 6, 6])], [_value("y", [1, 4, 4, 4])], [_weights((4, 5, 3, 3))])


def _reshape_wrong_count() -> onnx.ModelProto:
    shape = numpy_helper.from_array(np.array([5, 5], np.int64), "shape")
    return _model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="bad_reshape")],
                  [_value("x", [2, 3])], [_value("y", [5, 5])], [shape])


def _concat_mismatch() -> onnx.ModelProto:
    return _model([helper.make_node("Concat", ["a", "b"], ["y"], name="bad_concat", axis=1)],
                  [_value("a", [1, 2, 4]), _value("b", [1, 2, 5])], [_value("y", [1, 4, 4])])


def _declared_input_type_disagrees() -> onnx.ModelProto:
    return _model([helper.make_node("Add", ["x", "B"], ["y"], name="typed_add")],
                  [_value("x", [4], TensorProto.INT32)], [_value("y", [4])],
                  [numpy_helper.from_array(np.ones(4, np.float32), "B")])


# --- element types --------------------------------------------------------------------------------------------------

def _typed_identity(elem: int) -> Callable[[], onnx.ModelProto]:
    return lambda: _unary("Identity", elem, name="copy", shape=[4])


def _float8_cast() -> onnx.ModelProto:
    return _model([helper.make_node("Cast", ["x"], ["y"], name="to_float8", to=TensorProto.FLOAT8E4M3FN)],
                  [_value("x", [4])], [_value("y", [4], TensorProto.FLOAT8E4M3FN)], opsets=[("", 21)])


# --- opsets and versions --------------------------------------------------------------------------------------------

def _with_opsets(opsets: list[tuple[str, int]], ir_version: int | None = None) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        model = _conv_model()
        del model.opset_import[:]
        model.opset_import.extend(helper.make_opsetid(domain, version) for domain, version in opsets)
        if ir_version is not None:
            model.ir_version = ir_version
        return model
    return build


def _opset_1_pad() -> onnx.ModelProto:
    """Opset-1 models are lifted to opset 7 when onnx's converter can; it has no adapter for Pad-1."""
    model = _model([helper.make_node("Pad", ["x"], ["y"], name="pad", paddings=[0, 0, 1, 1])],
                   [_value("x", [2, 2])], [_value("y", [2, 4])])
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", 1))
    return model


# --- hostile names in faulty models: the error must stay one line ---------------------------------------------------

def _named_unsupported(node_name: str) -> Callable[[], onnx.ModelProto]:
    return lambda: _model([helper.make_node("Det", ["x"], ["y"], name=node_name)],
                          [_value("x", [2, 3, 3])], [_value("y", [2])])


def _named_dangling(tensor: str) -> Callable[[], onnx.ModelProto]:
    return lambda: _model([helper.make_node("Add", ["x", tensor], ["y"], name="add")],
                          [_value("x", [4])], [_value("y", [4])])


def _named_zero_dim(tensor: str) -> Callable[[], onnx.ModelProto]:
    return lambda: _model([helper.make_node("Relu", [tensor], ["y"], name="relu")],
                          [_value(tensor, [0, 4])], [_value("y", [0, 4])])


# --- external data --------------------------------------------------------------------------------------------------

def _external(location: str, offset: int = 0, length: int | None = None) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        model = _conv_model()
        weights = model.graph.initializer[0]
        size = len(weights.raw_data)
        weights.ClearField("raw_data")
        weights.data_location = TensorProto.EXTERNAL
        entries = {"location": location, "offset": str(offset), "length": str(size if length is None else length)}
        for key, value in entries.items():
            weights.external_data.add(key=key, value=value)
        return model
    return build


WEIGHT_BYTES = np.arange(54, dtype=np.float32).tobytes()


def cases() -> list[Case]:
    """Every case of the corpus, in file order."""
    hostile = {
        "c_keyword": "int",
        "quotes": 'say "hi" \'there\'',
        "newline": "line one\nline two",
        "comment_end": "x */ int main(void) { return 1; } /*",
        "include": "#include <stdlib.h>",
        "non_ascii": "Größe_μ_层",
        "mako": "${os.system('id')}<%text>",
        "backslash": "C:\\temp\\x\\",
    }
    made: list[Case] = [
        Case("empty_file", "a zero-byte file", ("no graph",), _bytes(b"")),
        Case("truncated", "the first half of a valid model", ("not a valid ONNX model",), _bytes(_truncated())),
        Case("garbage", "4 KiB of random bytes", ("not a valid ONNX model",), _bytes(_garbage())),
        Case("text_file", "a text file", ("not a valid ONNX model",), _bytes(b"this is not an ONNX model\n")),
        Case("json_file", "a JSON document", ("not a valid ONNX model",),
             _bytes(json.dumps({"graph": {"node": []}}).encode())),
        Case("png_header", "the start of a PNG image", ("not a valid ONNX model",),
             _bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(32))),
        Case("zip_archive", "a zip archive holding a pickle (what a PyTorch file looks like)",
             ("not a valid ONNX model",), _bytes(_zip_archive())),
        Case("tensor_proto", "a serialised TensorProto instead of a model", ("not a valid ONNX model",),
             _bytes(_tensor_proto())),
        Case("no_graph", "a ModelProto with an opset but no graph", ("no graph",), _proto(_no_graph)),
        Case("folder", "a folder named like a model", ("is a folder",), _directory),
        Case("cyclic", "two nodes feed each other", ("cycl",), _proto(_cyclic)),
        Case("dangling_input", "a node reads a tensor nothing produces", ("haunted_add", "Add", "ghost"),
             _proto(_dangling_input)),
        Case("missing_initializer", "the Conv weights are neither an input nor an initializer",
             ("conv", "Conv", "'W'"), _proto(_missing_initializer)),
        Case("output_not_produced", "a graph output no node writes", ("nowhere",), _proto(_output_not_produced)),
        Case("no_outputs", "a graph without outputs", ("no outputs",), _proto(_no_outputs)),
        Case("duplicate_tensor_names", "two nodes write the same tensor", ("second_writer", "Sigmoid", "'t'"),
             _proto(_duplicate_tensor_names)),
        Case("duplicate_initializers", "two initializers share a name", ("'W'",), _proto(_duplicate_initializers)),
        Case("graph_input_reassigned", "a node overwrites a graph input", ("overwrite_input", "Relu", "'x'"),
             _proto(_graph_input_reassigned)),
        Case("dynamic_dim", "an input with a symbolic height (a dynamic batch alone compiles for batch 1)",
             ("'x'", "height", "--input-shape"), _proto(_conv_with_input([1, 2, "height", 6]))),
        Case("zero_dim", "an input with a zero dimension", ("'x'", "= 0"), _proto(_conv_with_input([0, 2, 6, 6]))),
        Case("negative_dim", "an input with a negative dimension", ("'x'", "-3"),
             _proto(_conv_with_input([1, 2, -3, 6]))),
        Case("no_shape", "an input without a shape", ("'x'", "no shape"), _proto(_conv_with_input(None))),
        Case("output_without_shape", "a graph output without a shape", ("'y'", "no shape"),
             _proto(_output_without_shape)),
        Case("no_input_type", "an input without a type", ("'x'",), _proto(_no_input_type)),
        Case("sequence_input", "an input that is a sequence, not a tensor", ("'x'", "tensor"),
             _proto(_sequence_input)),
        Case("absurd_input_dims", "a 2^60-element input", ("'x'", "bytes"), _proto(_absurd_input)),
        Case("absurd_constant_of_shape", "ConstantOfShape asked for 10^15 elements", ("make_zeros", "bytes"),
             _proto(_absurd_constant_of_shape)),
        Case("absurd_expand", "Expand to 2^48 elements", ("blow_up", "Expand", "bytes"), _proto(_absurd_expand)),
        Case("initializer_huge_dims", "an initializer claiming 2^60 elements with 16 bytes of data", ("'B'",),
             _proto(_initializer_claims_huge_dims)),
        Case("initializer_short_data", "an initializer with fewer bytes than its dims need", ("'W'",),
             _proto(_initializer_short_data)),
        Case("unsupported_op", "an op no platform implements (Det)", ("determinant", "Det", "not supported"),
             _proto(_unsupported_op)),
        Case("unknown_op", "an op that does not exist in the default domain", ("time_travel", "FluxCapacitor"),
             _proto(_unknown_default_op)),
        Case("custom_domain_op", "an op from a custom domain", ("magic", "MagicGelu", "com.example.ops"),
             _proto(_custom_domain_op)),
        Case("custom_domain_not_imported", "a custom-domain op whose domain is not imported",
             ("MagicGelu", "com.example.ops"), _proto(_custom_domain_not_imported)),
        Case("control_flow", "an If node with subgraphs", ("branch", "If"), _proto(_control_flow)),
        Case("loop_dynamic_trip_count", "a Loop whose trip count is a graph input",
             ("counting", "Loop", "constant trip count", "'n'"), _proto(_loop_dynamic_trip_count)),
        Case("strides_as_floats", "Conv strides given as floats", ("conv", "Conv", "strides"),
             _proto(_conv_attributes(strides=[1.0, 1.0], pads=[1, 1, 1, 1]))),
        Case("kernel_shape_as_string", "Conv kernel_shape given as a string", ("conv", "Conv", "kernel_shape"),
             _proto(_conv_attributes(kernel_shape="3x3"))),
        Case("zero_stride", "Conv with stride 0", ("conv", "Conv", "stride"),
             _proto(_conv_attributes(strides=[0, 0]))),
        Case("negative_pads", "Conv with negative pads", ("conv", "Conv", "pad"),
             _proto(_conv_attributes(pads=[-1, -1, -1, -1]))),
        Case("unknown_attribute", "Relu with an attribute it does not have", ("relu_with_extra", "Relu", "slope"),
             _proto(_unknown_attribute)),
        Case("missing_required_input", "Conv without its weights", ("conv_without_weights", "Conv"),
             _proto(_missing_required_input)),
        Case("too_many_inputs", "Relu with two inputs", ("relu_two_inputs", "Relu"), _proto(_too_many_inputs)),
        Case("kernel_larger_than_input", "a 3x3 kernel on a 2x2 input without padding", ("wide_conv", "Conv"),
             _proto(_kernel_larger_than_input)),
        Case("add_shapes_disagree", "Add of 1x3x4x4 and 1x5x4x4", ("bad_add", "Add"),
             _proto(lambda: _binary("Add", [1, 3, 4, 4], [1, 5, 4, 4], "bad_add"))),
        Case("matmul_shapes_disagree", "MatMul of 2x3 and 4x5", ("bad_matmul", "MatMul"),
             _proto(lambda: _binary("MatMul", [2, 3], [4, 5], "bad_matmul"))),
        Case("conv_channels_disagree", "3 input channels, weights for 5", ("mismatched_conv", "Conv"),
             _proto(_conv_channel_mismatch)),
        Case("reshape_wrong_count", "Reshape of 6 elements to 25", ("bad_reshape", "Reshape"),
             _proto(_reshape_wrong_count)),
        Case("concat_shapes_disagree", "Concat along axis 1 of tensors that differ in axis 2",
             ("bad_concat", "Concat"), _proto(_concat_mismatch)),
        Case("input_type_disagrees", "Add of an int32 input and a float initializer", ("typed_add", "Add"),
             _proto(_declared_input_type_disagrees)),
        Case("complex_dtype", "complex64 tensors", ("copy", "Identity", "COMPLEX64"),
             _proto(_typed_identity(TensorProto.COMPLEX64))),
        Case("string_dtype", "string tensors", ("copy", "Identity", "STRING"),
             _proto(_typed_identity(TensorProto.STRING))),
        Case("float8_dtype", "a cast to float8 e4m3", ("to_float8", "Cast", "FLOAT8E4M3FN"), _proto(_float8_cast)),
        Case("bfloat16_dtype", "bfloat16 tensors", ("copy", "Identity", "BFLOAT16"),
             _proto(_typed_identity(TensorProto.BFLOAT16))),
        Case("opset_too_old", "default-domain opset 1 with a Pad the version converter cannot lift", ("opset 1",),
             _proto(_opset_1_pad)),
        Case("opset_too_new", "default-domain opset 999", ("opset 999",), _proto(_with_opsets([("", 999)]))),
        Case("no_default_opset", "only a custom domain is imported", ("opset",),
             _proto(_with_opsets([("com.example.ops", 1)]))),
        Case("ir_version_too_new", "IR version 99", ("IR version 99",), _proto(_with_opsets([("", OPSET)], 99))),
        Case("external_data_missing", "weights in a file that is not there", ("'W'", "missing"),
             _proto(_external("weights.bin"))),
        Case("external_data_escapes", "weights in ../ outside the model's folder", ("'W'", "outside"),
             _proto(_external("../escape/weights.bin"))),
        Case("external_data_absolute", "weights at an absolute path", ("'W'", "outside"),
             _proto(_external("/etc/hostname"))),
        Case("external_data_short", "a weights file shorter than offset + length", ("'W'",),
             _proto(_external("external_data_short.bin", offset=16)),
             extra_files={"external_data_short.bin": WEIGHT_BYTES}),
    ]
    for key, text in hostile.items():
        made.append(Case(f"name_{key}_unsupported", f"an unsupported node named {text!r}", ("Det", "not supported"),
                         _proto(_named_unsupported(text))))
    for key in ("newline", "comment_end", "include", "mako"):
        text = hostile[key]
        made.append(Case(f"name_{key}_dangling", f"an undefined tensor named {text!r}", ("Add",),
                         _proto(_named_dangling(text))))
        made.append(Case(f"name_{key}_zero_dim", f"an input named {text!r} with a zero dimension", ("= 0",),
                         _proto(_named_zero_dim(text))))
    return made


def write_corpus(folder: Path) -> list[Case]:
    """(Re)write the corpus into ``folder``: one ``<case>.onnx`` per case, its extra files, and ``cases.yaml``."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    made = cases()
    for case in made:
        case.write(folder / case.file_name)
        for name, data in sorted(case.extra_files.items()):
            (folder / name).write_bytes(data)
    manifest = [{"file": case.file_name, "what": case.what, "mentions": list(case.mentions)} for case in made]
    text = "# Written by tests/corpus/make_bad_corpus.py; do not edit by hand.\n"
    text += yaml.safe_dump(manifest, sort_keys=True, allow_unicode=True, width=1000)
    (folder / "cases.yaml").write_text(text, encoding="utf-8")
    return made


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else DEFAULT_FOLDER
    made = write_corpus(folder)
    print(f"{len(made)} bad models written to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
