"""From an ONNX file to a canonical, fully shaped graph.

The sequence uses onnx's own tools and nothing home-made: ``onnx.load`` →
``onnx.checker.check_model`` → inline local functions → ``version_converter`` to
one canonical opset → strict shape inference → onnx-graphsurgeon.  The rest of
the compiler can then rely on one opset and on a static dtype and shape for
every tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import onnx
import onnx_graphsurgeon as gs
from onnx import inliner, shape_inference, version_converter

from deeploy_core.frontend.batch_dimension import fix_dynamic_batch
from deeploy_core.frontend.custom_ops import OpClaims
from deeploy_core.frontend.detached_weights import detach_large_weights
from deeploy_core.frontend.declared_ops import DeclaredNodes, infer_with_declarations, park_declared_ops, unpark_declared_ops
from deeploy_core.frontend.diagnosis import check_model, first_line, inference_failed, infer_strictly
from deeploy_core.frontend.dialect_ops import proxy_dialect_ops, restore_dialect_ops
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.external_data import load_external_data_safely
from deeploy_core.frontend.input_shapes import input_shape_hint
from deeploy_core.frontend.matmul_integer_alias import alias_float_matmul_integer
from deeploy_core.frontend.scan_unroll import unroll_scans
from deeploy_core.frontend.loop_unroll import (blame_loop, check_unrolled_shapes,
                                               unroll_loops)
from deeploy_core.frontend.legacy_ops import park_legacy_ops, repair_attribute_pads, unpark_legacy_ops
from deeploy_core.frontend.shape_folding import fold_shape_arithmetic
from deeploy_core.frontend.structure import check_structure
from deeploy_core.frontend.unclaimed import refuse_unclaimed, refuse_undeclared
from deeploy_core.frontend.tensor_limits import check_initializer_sizes, check_tensors
from deeploy_core.frontend.unknown_shapes import check_static_shapes
from deeploy_core.frontend.coerced_softmax import uncoerce_softmax_axes
from deeploy_core.frontend.group_norm_18 import per_channel_group_norms
from deeploy_core.frontend.legacy_resize import note_legacy_resizes, restore_legacy_semantics
from deeploy_core.frontend.versions import conversion_target, default_opset, lift_ancient_opset

CANONICAL_OPSET = 24
"""Every model is converted to this default-domain opset before lowering (newer reviewed ones stay as they are)."""


@dataclass
class ImportedModel:
    """The canonical model, its graph and what the importer had to adjust."""

    model: onnx.ModelProto
    graph: gs.Graph
    source_opset: int
    warnings: list[str] = field(default_factory=list)


def read_model(path: Path) -> onnx.ModelProto:
    """Parse the file (external data loaded only from inside the model's folder)."""
    if path.is_dir():
        raise ModelImportError(f"{path}: is a folder, not an ONNX file")
    if not path.is_file():
        raise ModelImportError(f"{path}: no such file")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as error:  # noqa: BLE001 - protobuf raises several unrelated types
        raise ModelImportError(f"{path}: not a valid ONNX model ({first_line(error)})") from error
    if not model.HasField("graph"):
        raise ModelImportError(f"{path}: not a valid ONNX model (no graph)")
    load_external_data_safely(model, path)
    return model


def apply_input_shapes(model: onnx.ModelProto, shapes: dict[str, tuple[int, ...]]) -> None:
    """Replace the declared shapes of graph inputs named in ``shapes``."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    inputs = {value.name: value for value in model.graph.input if value.name not in initializers}
    for name, shape in sorted(shapes.items()):
        if name not in inputs:
            raise ModelImportError(f"--input-shape {name}: the model has no input of that name (inputs: {', '.join(inputs)})")
        tensor_type = inputs[name].type.tensor_type
        declared = tensor_type.shape.dim
        if len(declared) and len(declared) != len(shape):
            raise ModelImportError(f"--input-shape {name}: rank {len(shape)} given, the model declares rank {len(declared)}")
        for axis, (dim, wanted) in enumerate(zip(declared, shape)):
            # A fixed dimension is part of the model (reshape constants, weights and the reference depend on it).
            if dim.HasField("dim_value") and dim.dim_value > 0 and dim.dim_value != wanted:
                raise ModelImportError(
                    f"--input-shape {name}={'x'.join(map(str, shape))}: the model fixes dimension {axis} of {name!r} to "
                    f"{dim.dim_value}; --input-shape only sets dynamic dimensions (keep {dim.dim_value} there)")
        tensor_type.ClearField("shape")
        tensor_type.shape.SetInParent()
        for dim in shape:
            tensor_type.shape.dim.add().dim_value = dim


def check_static_inputs(model: onnx.ModelProto) -> None:
    """Every graph input must have a known, positive shape."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        if not value.type.HasField("tensor_type"):
            raise ModelImportError(f"input {value.name!r}: only tensor inputs are supported")
        tensor_type = value.type.tensor_type
        if not tensor_type.HasField("shape"):
            raise ModelImportError(f"input {value.name!r} has no shape: give one with {input_shape_hint(value.name)}")
        for index, dim in enumerate(tensor_type.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                continue
            what = f"dynamic dimension {dim.dim_param!r}" if dim.dim_param else f"dimension {index} = {dim.dim_value}"
            dims: list[int | str] = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else d.dim_param
                                     or f"D{position + 1}" for position, d in enumerate(tensor_type.shape.dim)]
            raise ModelImportError(
                f"input {value.name!r} has {what}: fix it with {input_shape_hint(value.name, dims)}"
            )


def infer_shapes(model: onnx.ModelProto, declared_ops: DeclaredNodes | None = None) -> tuple[onnx.ModelProto, list[str]]:
    """Strict shape inference; declared intermediate shapes are re-derived, declared outputs checked.

    Nodes of schema-less ops parked with their declarations (``declared_ops``)
    get their outputs from those declarations, round by round.
    """
    parked = declared_ops or DeclaredNodes()
    warnings: list[str] = []
    del model.graph.value_info[:]
    try:
        inferred, declared_warnings = infer_with_declarations(model, parked, infer_strictly)
        return inferred, warnings + declared_warnings
    except shape_inference.InferenceError as error:
        if "existing shape" not in first_line(error):
            raise inference_failed(error) from None
    declared = {}
    for output in model.graph.output:
        tensor_type = output.type.tensor_type
        declared[output.name] = [dim.dim_value for dim in tensor_type.shape.dim]
        tensor_type.ClearField("shape")
    try:
        inferred, declared_warnings = infer_with_declarations(model, parked, infer_strictly)
    except shape_inference.InferenceError as error:
        raise inference_failed(error) from None
    warnings.extend(warning for warning in declared_warnings if warning not in warnings)
    for output in inferred.graph.output:
        shape = [dim.dim_value for dim in output.type.tensor_type.shape.dim]
        if declared.get(output.name) != shape:
            warnings.append(f"output {output.name!r}: declared shape {declared.get(output.name)} disagrees with the inferred {shape}; using the inferred shape")
    return inferred, warnings


def canonicalise(model: onnx.ModelProto, input_shapes: dict[str, tuple[int, ...]] | None = None,
                 claims: OpClaims | None = None) -> ImportedModel:
    """Check, inline, convert and shape a parsed model.

    With ``claims`` (what the selected platform maps, and the declarations of
    schema-less ops), every node whose op has no ONNX schema and is not
    claimed is refused in one unsupported-op report, and declared ops are
    typed by their declarations.
    """
    model = lift_ancient_opset(model)
    source_opset = default_opset(model)
    check_structure(model)
    check_initializer_sizes(model.graph)
    park_legacy_ops(model)
    per_channel_group_norms(model, source_opset)
    repair_attribute_pads(model)
    if claims is not None:
        refuse_unclaimed(model, claims)
    declared_ops = park_declared_ops(model, claims.schemas if claims is not None else {})
    if claims is not None:
        refuse_undeclared(model, claims)
    dialect_nodes = proxy_dialect_ops(model)
    alias_float_matmul_integer(model, claims)
    weights = detach_large_weights(model)  # until shapes are known: onnx's tools would copy them four times
    check_model(model)
    if model.functions:
        model = inliner.inline_local_functions(model)
    apply_input_shapes(model, input_shapes or {})
    notices = fix_dynamic_batch(model, given=(input_shapes or {}).keys())
    check_static_inputs(model)
    unrolled = unroll_loops(model, source_opset)
    unroll_scans(model, source_opset)
    uncoerce_softmax_axes(model, source_opset)
    legacy_resizes = note_legacy_resizes(model, source_opset)
    target_opset = conversion_target(source_opset, CANONICAL_OPSET)
    if source_opset != target_opset:
        try:
            model = version_converter.convert_version(model, target_opset)
        except Exception as error:  # noqa: BLE001 - the converter raises RuntimeError and assertion texts
            raise ModelImportError(
                f"cannot convert the model from opset {source_opset} to opset {target_opset}: {first_line(error)}"
            ) from error
    restore_legacy_semantics(model, legacy_resizes)
    unpark_legacy_ops(model)
    fold_shape_arithmetic(model, kept_outputs=dialect_nodes, declared=declared_ops)
    try:
        model, warnings = infer_shapes(model, declared_ops)
    except ModelImportError as error:
        raise blame_loop(error, unrolled) from None
    weights.reattach(model)
    unpark_declared_ops(model, declared_ops)
    check_tensors(model)
    try:
        check_static_shapes(model)
    except ModelImportError:
        check_unrolled_shapes(model, unrolled)  # a Loop's copies: say it is the Loop
        raise
    restore_dialect_ops(model, dialect_nodes)
    graph = gs.import_onnx(model)
    try:
        graph.toposort()
    except Exception as error:  # noqa: BLE001 - graphsurgeon raises a bare exception on cycles
        raise ModelImportError(f"the graph is not acyclic: {first_line(error)}") from error
    return ImportedModel(model=model, graph=graph, source_opset=source_opset, warnings=notices + warnings)


def import_model(path: Path, input_shapes: dict[str, tuple[int, ...]] | None = None,
                 claims: OpClaims | None = None) -> ImportedModel:
    """Read ``path`` and return the canonical graph (see :func:`canonicalise` for ``claims``)."""
    return canonicalise(read_model(path), input_shapes, claims)
