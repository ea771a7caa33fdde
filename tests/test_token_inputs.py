"""Token inputs: ``validate`` draws ids within the embedding and 0/1 masks by itself; run-time ids stay in bounds.

A text model's int64 ``input_ids`` index an embedding ``Gather`` and its
``attention_mask`` holds 0/1.  Without flags, ``validate`` finds both from the
graph (:mod:`deeploy_core.validate.token_inputs`): ids below the gathered
dimension (through casts and reshapes; the smallest table wins), masks as
padding rows of ones then zeros, other integer inputs the small signed values
they always had.  End to end, a word and a token-type embedding validate on
generic-c with no flag (the old draw of -10..10 indexed past a 5-row table,
which ONNX Runtime refuses), and an id past the table, given through
``--inputs``, reads the clamped last row instead of memory beyond the table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, reference_inputs, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate.data import random_inputs
from deeploy_core.validate.token_inputs import IntegerDraw, integer_draws

WORDS, TYPES, WIDTH, SEQUENCE = 5, 2, 3, 6


def _embedding_model(extra_nodes: list[onnx.NodeProto] | None = None,
                     extra_inputs: list[onnx.ValueInfoProto] | None = None) -> onnx.ModelProto:
    """input_ids → Gather(word table) + token_type_ids → Gather(type table) → output; ids reach the word table
    through a Reshape (a pass-through op), as the TorchScript exporter's views do."""
    rng = np.random.default_rng(1)
    words = numpy_helper.from_array(rng.standard_normal((WORDS, WIDTH)).astype(np.float32), "words")
    types = numpy_helper.from_array(rng.standard_normal((TYPES, WIDTH)).astype(np.float32), "types")
    shape = numpy_helper.from_array(np.array([1, SEQUENCE], np.int64), "shape")
    nodes = [
        helper.make_node("Reshape", ["input_ids", "shape"], ["ids"], name="view"),
        helper.make_node("Gather", ["words", "ids"], ["word_rows"], name="word_embedding"),
        helper.make_node("Gather", ["types", "token_type_ids"], ["type_rows"], name="type_embedding"),
        helper.make_node("Add", ["word_rows", "type_rows"], ["output"], name="sum"),
        *(extra_nodes or []),
    ]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, [1, SEQUENCE])
              for name in ("input_ids", "token_type_ids")]
    graph = helper.make_graph(nodes, "embedding", [*inputs, *(extra_inputs or [])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, SEQUENCE, WIDTH])],
                              [words, types, shape])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _int_input(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.INT64, [2, SEQUENCE])


def test_ids_are_bounded_by_the_table_they_index_and_masks_are_found() -> None:
    extra_nodes = [
        helper.make_node("Cast", ["padding"], ["keep"], to=TensorProto.BOOL, name="to_bool"),  # a mask by use
        helper.make_node("Cast", ["count"], ["count_float"], to=TensorProto.FLOAT, name="to_float"),
    ]
    model = _embedding_model(extra_nodes, [_int_input("attention_mask"), _int_input("padding"), _int_input("count")])
    assert integer_draws(model) == {
        "input_ids": IntegerDraw(bound=WORDS),        # through the Reshape
        "token_type_ids": IntegerDraw(bound=TYPES),
        "attention_mask": IntegerDraw(mask=True),     # by its name (its nodes here are none)
        "padding": IntegerDraw(mask=True),            # by its Cast to bool
    }, "count feeds a float Cast only: it keeps the ordinary integer draw"


def test_random_inputs_draw_ids_within_the_table_and_padding_masks() -> None:
    model = _embedding_model(extra_inputs=[_int_input("attention_mask"), _int_input("count")])
    specs = [(name, np.dtype(np.int64), (1, SEQUENCE) if name != "attention_mask" and name != "count" else (2, SEQUENCE))
             for name in ("input_ids", "token_type_ids", "attention_mask", "count")]
    draws = integer_draws(model)
    ids, types, masks, counts = [], [], [], []
    for seed in range(20):
        inputs = random_inputs(specs, seed, None, draws)
        ids.append(inputs["input_ids"])
        types.append(inputs["token_type_ids"])
        masks.append(inputs["attention_mask"])
        counts.append(inputs["count"])
    assert np.unique(np.concatenate(ids)).tolist() == list(range(WORDS))
    assert np.unique(np.concatenate(types)).tolist() == [0, 1]
    for mask in masks:
        assert mask.dtype == np.int64 and set(np.unique(mask).tolist()) <= {0, 1}
        assert (mask[:, 0] == 1).all(), "every row keeps at least its first position"
        assert (np.diff(mask, axis=1) <= 0).all(), "ones, then zeros: a padding mask"
    assert any((mask == 0).any() for mask in masks), "some rows are padded"
    assert np.concatenate(counts).min() < 0, "an input that indexes nothing keeps the signed small-integer draw"


@pytest.fixture(scope="module")
def host() -> PluginHost:
    pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
    from deeploy_generic_c import plugin as generic_c_plugin

    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return plugins


def test_validate_draws_token_ids_itself(tmp_path: Path, host: PluginHost) -> None:
    path = tmp_path / "embedding.onnx"
    onnx.save(_embedding_model(), path)
    inputs = reference_inputs(path, None)
    assert inputs["input_ids"].max() < WORDS and inputs["token_type_ids"].max() < TYPES
    assert inputs["input_ids"].min() >= 0 and inputs["token_type_ids"].min() >= 0
    _, result = validate_model(path, CompileOptions(platform="generic-c"), host, repeats=1)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]


def test_run_time_ids_outside_the_table_read_its_edge_rows(tmp_path: Path, host: PluginHost) -> None:
    model = _embedding_model()
    path = tmp_path / "embedding.onnx"
    onnx.save(model, path)
    ids = np.array([[0, 4, 5, 99, -1, -100]], np.int64)  # in range, past the end, far past, from the end, far before
    types = np.zeros((1, SEQUENCE), np.int64)
    np.savez(tmp_path / "inputs.npz", ids, types)
    words = numpy_helper.to_array(model.graph.initializer[0])
    type_rows = numpy_helper.to_array(model.graph.initializer[1])
    expected = words[[0, 4, 4, 4, 4, 0]][None] + type_rows[0]
    np.savez(tmp_path / "outputs.npz", expected)
    _, result = validate_model(path, CompileOptions(platform="generic-c"), host, inputs_npz=tmp_path / "inputs.npz",
                               outputs_npz=tmp_path / "outputs.npz", atol=0.0, rtol=0.0, repeats=1)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
