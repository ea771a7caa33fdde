"""The core's deployer: the stages every platform shares, driven by platform data.

A platform plugin usually needs no deployer code of its own: it describes its
engines, op mappings, C runtime and lowering passes as a
:class:`~deeploy_core.platform.Platform` and registers
``NetworkDeployer(platform, settings)`` through the platform hook.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.allocation.checked_solve import allocator_origin
from deeploy_core.codegen.chain import apply_chain, build_chain
from deeploy_core.codegen.execution_block import ExecutionBlock
from deeploy_core.codegen.network_files import (
    HEADER_NAME,
    SOURCE_NAME,
    WEIGHTS_HEADER,
    WEIGHTS_NAME,
    check_placement,
    emit_header,
    emit_source,
    emit_weights,
)
from deeploy_core.codegen.selection import PluginTransformation, create_selected
from deeploy_core.compilation import CompileSettings
from deeploy_core.deployer.base import Deployer
from deeploy_core.errors import DeeployError
from deeploy_core.frontend.claims import op_claims
from deeploy_core.frontend.importer import import_model
from deeploy_core.lowering import FoldConstants
from deeploy_core.lowering.constant_if import FoldConstantIf
from deeploy_core.lowering.dequantize_cast import CastToDequantizeLinear
from deeploy_core.lowering.expand_unmapped import ExpandUnmappedFunctions
from deeploy_core.lowering.gather_indices import WidenGatherIndices
from deeploy_core.lowering.integer_types import IntegerTypeInference
from deeploy_core.lowering.qcdq_constants import FoldQcdqConstants
from deeploy_core.lowering.qdq import QDQToInteger, QDQToIntegerExact
from deeploy_core.lowering.qonnx import LowerQonnx
from deeploy_core.lowering.concat_rescale import RescaleConcatInputs
from deeploy_core.lowering.quantized_lookup import LOOKUP_OP, QuantizedLookup
from deeploy_core.lowering.remove_identity import RemoveIdentity
from deeploy_core.lowering.sink_dequantize import SinkDequantize
from deeploy_core.lowering.static_shape_values import FoldStaticShapeValues
from deeploy_core.mapping import Layer
from deeploy_core.midend.context_builder import build_context
from deeploy_core.midend.memory_plan import plan_arena
from deeploy_core.midend.parse import map_nodes
from deeploy_core.midend.aliases import mark_aliases
from deeploy_core.midend.transients import hoist_transient_buffers
from deeploy_core.codegen.generated_network import GeneratedNetwork, TensorSpec
from deeploy_core.passes import Pass, Pipeline
from deeploy_core.platform import Platform, network_runtime
from deeploy_core.plugins.operators import plugin_mappers
from deeploy_core.report import network_report


class NetworkDeployer(Deployer):
    """Runs frontend → lowering → parse → bind (+ arena plan) → generate for one platform.

    Everything it computes goes into its :attr:`compilation`; its settings are
    the core's :class:`~deeploy_core.compilation.CompileSettings` (input shapes
    and types, quantization, network name, selected code transformations),
    which the platform's factory receives and passes on.  The
    composer sets the compilation's ``allocator`` and ``host`` (for operator and
    code-transformation extensions); operator plugins' mappers join the
    platform's in ``parse`` and their C files the runtime in ``generate``.
    """

    def __init__(self, platform: Platform, settings: CompileSettings | None = None) -> None:
        super().__init__(settings)
        self.compilation.platform = platform
        self.compilation.platform_name = platform.name
        check_placement(self.compilation.settings.c_api, platform.placement, platform.name)  # before any work

    @property
    def platform(self) -> Platform:
        """The platform data this deployer compiles for (kept in the compilation)."""
        platform = self.compilation.platform
        assert platform is not None, "set by the constructor"
        return platform

    # -- stages --------------------------------------------------------------------------------------

    def frontend(self) -> None:
        compilation = self.compilation
        imported = import_model(Path(compilation.model), compilation.settings.input_shapes,
                                op_claims(compilation.host, self.platform))
        compilation.graph = imported.graph
        compilation.warnings.extend(imported.warnings)

    def lower(self) -> None:
        compilation = self.compilation
        settings = compilation.settings
        typing = [IntegerTypeInference(settings.input_types)] if settings.input_types else []
        fixed_point: list[Pass[gs.Graph]] = [QDQToInteger()] if settings.quantization == "fixed-point" else []
        if settings.quantization == "exact" and self.platform.mappers_for("QLinearConv"):
            fixed_point = [QDQToIntegerExact()]  # the platform reproduces ONNX Runtime's fused QDQ kernels
        if fixed_point and self.platform.mappers_for(LOOKUP_OP):  # what is left of 8-bit islands: table lookups
            fixed_point = [RescaleConcatInputs(), *fixed_point,
                           QuantizedLookup("tflite" if settings.quantization == "fixed-point" else "float32")]
        pipeline = Pipeline(
            [FoldConstantIf(), ExpandUnmappedFunctions(self._mapped_ops()), FoldStaticShapeValues(), RemoveIdentity(),
             LowerQonnx(), FoldQcdqConstants(), CastToDequantizeLinear(), SinkDequantize(),
             *fixed_point, FoldConstants(), WidenGatherIndices(), *typing, *self.platform.lowering()],
            name=f"lowering:{self.platform.name}",
        )
        compilation.lowering_results = pipeline.apply_pass(compilation.graph, {}) or {}
        compilation.graph.cleanup(remove_unused_graph_inputs=False).toposort()

    def parse(self) -> None:
        compilation = self.compilation
        compilation.ctxt = build_context(compilation.graph, compilation.settings.c_api.mangler_prefix)
        compilation.ctxt.for_tiles = compilation.scratch_in_compute_level
        compilation.layers = map_nodes(compilation.graph, compilation.ctxt, self.platform,
                                       plugin_mappers(compilation.host, self.platform.name))

    def bind(self) -> None:
        compilation = self.compilation
        mark_aliases(compilation.layers, compilation.ctxt)
        if not compilation.scratch_in_compute_level:
            hoist_transient_buffers(compilation.layers, compilation.ctxt)
        self.progress.task(f"allocating the arena with {compilation.allocator_name}")
        compilation.memory_plan = plan_arena(
            compilation.layers, compilation.ctxt, compilation.allocator, compilation.allocator_name,
            self.platform.arena_alignment, allocator_origin(compilation.host, compilation.allocator_name),
        )

    def generate(self) -> GeneratedNetwork:
        compilation = self.compilation
        ctxt, plan = compilation.ctxt, compilation.memory_plan
        if plan is None:
            raise DeeployError("generate needs the memory plan that bind makes: run the stages in order (deploy)")
        plugin_passes = create_selected(compilation.host, self.platform.name, self.platform.code_transformations,
                                        compilation.settings.code_transformations, compilation.extension_options)
        blocks, chains = [], []
        for layer in compilation.layers:
            block, chain = self._execution_block(layer, plugin_passes)
            blocks.append(block)
            chains.append(chain)
        headers = sorted({header for layer in compilation.layers for header in layer.binding.template.headers}
                         | set(compilation.code.headers))
        name = compilation.network_name
        api = compilation.settings.c_api
        weights_header, weights_source = emit_weights(ctxt, api)
        files = {
            HEADER_NAME: emit_header(ctxt, plan, name, api, len(blocks)),
            SOURCE_NAME: emit_source(ctxt, plan, blocks, headers, name, compilation.code.definitions,
                                     self.platform.placement, api),
            WEIGHTS_HEADER: weights_header,
            WEIGHTS_NAME: weights_source,
        }
        report = network_report(name, self.platform.name, compilation.layers, ctxt, plan, compilation.warnings)
        for row, chain in zip(report["layers"], chains):
            row["code_transformations"] = chain
        compilation.generated = GeneratedNetwork(
            files=files,
            report=report,
            runtime=network_runtime(self.platform.runtime, compilation.layers),
            inputs=[self._spec(name) for name in ctxt.graph_inputs],
            outputs=[self._spec(name) for name in ctxt.graph_outputs],
            api=api,
        )
        return compilation.generated

    # -- helpers -------------------------------------------------------------------------------------

    def _mapped_ops(self) -> set[str]:
        """Op keys some mapper takes: the platform's and its operator plugins' (others may be expanded)."""
        added = plugin_mappers(self.compilation.host, self.platform.name)
        return set(self.platform.op_types()) | set(added.first) | set(added.last)

    def _spec(self, name: str) -> TensorSpec:
        buffer = self.compilation.ctxt[name]
        return TensorSpec(name, buffer.dtype.numpy_name, buffer.shape, self._quantisation_step(name))

    def _quantisation_step(self, name: str) -> float | None:
        if not self.compilation.ctxt[name].dtype.is_float:
            return 1.0
        tensor = self.compilation.graph.tensors().get(name)
        producer = tensor.inputs[0] if tensor is not None and len(tensor.inputs) == 1 else None
        if producer is None or producer.op != "DequantizeLinear" or not isinstance(producer.inputs[1], gs.Constant):
            return None
        scale = np.asarray(producer.inputs[1].values).reshape(-1)
        return float(scale[0]) if scale.size == 1 else None

    def _execution_block(self, layer: Layer, plugin_passes: list[PluginTransformation]
                         ) -> tuple[ExecutionBlock, list[str]]:
        """The layer's kernel call through its chain; returns the block and the names of the passes that ran."""
        compilation = self.compilation
        block = ExecutionBlock(layer=layer, body=[layer.binding.template.render(layer.representation)])
        chain = build_chain(plugin_passes, layer.binding.transformations,
                            compilation.chain_contributions.get(layer.index, ()))
        return apply_chain(block, chain, compilation.ctxt, plugin_passes)
