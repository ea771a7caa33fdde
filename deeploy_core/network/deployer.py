"""The core's deployer: the stages every platform shares, driven by platform data.

A platform plugin usually needs no deployer code of its own: it describes its
engines, op mappings, C runtime and lowering passes as a
:class:`~deeploy_core.platform.Platform` and registers
``NetworkDeployer(platform)`` through the platform hook.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.allocation.checked_solve import allocator_origin
from deeploy_core.codegen.chain import build_chain
from deeploy_core.codegen.execution_block import ExecutionBlock
from deeploy_core.codegen.network_files import (
    HEADER_NAME,
    SOURCE_NAME,
    WEIGHTS_HEADER,
    WEIGHTS_NAME,
    emit_header,
    emit_source,
    emit_weights,
)
from deeploy_core.deployer import Deployer
from deeploy_core.errors import DeeployError, PluginError
from deeploy_core.frontend.importer import import_model
from deeploy_core.lowering import FoldConstants
from deeploy_core.lowering.integer_types import IntegerTypeInference
from deeploy_core.lowering.qdq import QDQToInteger
from deeploy_core.mapping import Layer, NodeMapper
from deeploy_core.midend.context_builder import build_context
from deeploy_core.midend.memory_plan import plan_arena
from deeploy_core.midend.parse import map_nodes
from deeploy_core.midend.aliases import mark_aliases
from deeploy_core.midend.transients import hoist_transient_buffers
from deeploy_core.network.generated import GeneratedNetwork, TensorSpec
from deeploy_core.passes import Pipeline
from deeploy_core.platform import Platform
from deeploy_core.report import network_report


class NetworkDeployer(Deployer):
    """Runs frontend → lowering → parse → bind (+ arena plan) → generate for one platform.

    Options: ``input_shapes`` (name → shape), ``network_name``, ``allocator_name``.
    The composer sets ``allocator`` and ``host`` (for operator and
    code-transformation extensions).
    """

    def __init__(self, platform: Platform, **options: Any) -> None:
        super().__init__(**options)
        self.platform = platform
        self.platform_name = platform.name
        self.warnings: list[str] = []
        self.layer_code: dict[int, tuple[str, list[str]]] = {}
        """Code that replaces a layer's own kernel call: layer index → (body, file-scope definitions); the tiler sets it."""
        self.extra_headers: list[str] = []
        self.extra_definitions: list[str] = []

    # -- stages --------------------------------------------------------------------------------------

    def frontend(self) -> None:
        imported = import_model(Path(self.model), self.options.get("input_shapes"))
        self.graph = imported.graph
        self.warnings.extend(imported.warnings)

    def lower(self) -> None:
        typing = [IntegerTypeInference(self.options["input_types"])] if self.options.get("input_types") else []
        fixed_point = [QDQToInteger()] if self.options.get("quantization") == "fixed-point" else []
        pipeline = Pipeline(
            [*fixed_point, FoldConstants(), *typing, *self.platform.lowering()], name=f"lowering:{self.platform.name}"
        )
        self.lowering_results = pipeline.apply_pass(self.graph, {}) or {}
        self.graph.cleanup(remove_unused_graph_inputs=False).toposort()

    def parse(self) -> None:
        self.ctxt = build_context(self.graph)
        self.layers: list[Layer] = map_nodes(self.graph, self.ctxt, self.platform, self._operator_extensions())

    def bind(self) -> None:
        mark_aliases(self.layers, self.ctxt)
        hoist_transient_buffers(self.layers, self.ctxt)
        self.progress.task(f"allocating the arena with {self.allocator_name}")
        self.memory_plan = plan_arena(
            self.layers, self.ctxt, self.allocator, self.allocator_name, self.platform.arena_alignment,
            allocator_origin(self.host, self.allocator_name),
        )

    def generate(self) -> GeneratedNetwork:
        blocks = [self._execution_block(layer) for layer in self.layers]
        headers = sorted({header for layer in self.layers for header in layer.binding.template.headers}
                         | set(self.extra_headers))
        name = str(self.options.get("network_name") or Path(str(self.model)).stem)
        weights_header, weights_source = emit_weights(self.ctxt)
        files = {
            HEADER_NAME: emit_header(self.ctxt, self.memory_plan, name),
            SOURCE_NAME: emit_source(self.ctxt, self.memory_plan, blocks, headers, name, self.extra_definitions,
                                     self.platform.placement),
            WEIGHTS_HEADER: weights_header,
            WEIGHTS_NAME: weights_source,
        }
        report = network_report(name, self.platform.name, self.layers, self.ctxt, self.memory_plan, self.warnings)
        self.generated = GeneratedNetwork(
            files=files,
            report=report,
            runtime=self.platform.runtime,
            inputs=[self._spec(name) for name in self.ctxt.graph_inputs],
            outputs=[self._spec(name) for name in self.ctxt.graph_outputs],
        )
        return self.generated

    # -- helpers -------------------------------------------------------------------------------------

    def _spec(self, name: str) -> TensorSpec:
        buffer = self.ctxt[name]
        return TensorSpec(name, buffer.dtype.numpy_name, buffer.shape, self._quantisation_step(name))

    def _quantisation_step(self, name: str) -> float | None:
        if not self.ctxt[name].dtype.is_float:
            return 1.0
        tensor = self.graph.tensors().get(name)
        producer = tensor.inputs[0] if tensor is not None and len(tensor.inputs) == 1 else None
        if producer is None or producer.op != "DequantizeLinear" or not isinstance(producer.inputs[1], gs.Constant):
            return None
        scale = np.asarray(producer.inputs[1].values).reshape(-1)
        return float(scale[0]) if scale.size == 1 else None

    def _operator_extensions(self) -> dict[str, list[NodeMapper]]:
        extra: dict[str, list[NodeMapper]] = {}
        if self.host is None:
            return extra
        for extension in self.host.extensions("operator"):
            if extension.platform != self.platform.name:
                continue
            mapper = self.host.create("operator", extension.name)
            if not isinstance(mapper, NodeMapper):
                raise self._plugin_error("operator", extension.name, f"creating operator {extension.name!r}",
                                         TypeError(f"returned {type(mapper).__name__}, expected a NodeMapper"))
            extra.setdefault(extension.op_type, []).append(mapper)
        return extra

    def _code_transformations(self) -> list[tuple[Any, Any]]:
        if self.host is None:
            return []
        chosen = []
        for extension in self.host.extensions("code_transformation"):
            if extension.platforms and self.platform.name not in extension.platforms:
                continue
            made = self.host.create("code_transformation", extension.name)
            if not callable(getattr(made, "apply", None)):
                raise self._plugin_error(
                    "code_transformation", extension.name, f"creating code_transformation {extension.name!r}",
                    TypeError(f"returned {type(made).__name__}, which has no apply(block, ctxt)"))
            chosen.append((extension, made))
        return chosen

    def _plugin_error(self, kind: str, name: str, what: str, cause: BaseException) -> PluginError:
        """The one-line error blaming the plugin that registered extension ``name`` of ``kind``."""
        origin = self.host.registered(kind, name).origin
        return PluginError(origin.plugin, f"{origin.distribution} {origin.version}".strip(), what, cause)

    def _apply_plugin_pass(self, extension: Any, transformation: Any, block: ExecutionBlock) -> ExecutionBlock:
        """Run a plugin's code transformation; a crash or a wrong result names the plugin, not the core."""
        what = f"applying code_transformation {extension.name!r} to layer {block.layer.name!r}"
        try:
            result = transformation.apply(block, self.ctxt)
        except DeeployError:
            raise
        except Exception as error:  # noqa: BLE001 - the error boundary around plugin code
            raise self._plugin_error("code_transformation", extension.name, what, error) from error
        if not isinstance(result, ExecutionBlock):
            raise self._plugin_error("code_transformation", extension.name, what,
                                     TypeError(f"apply() returned {type(result).__name__}, expected an ExecutionBlock"))
        return result

    def _execution_block(self, layer: Layer) -> ExecutionBlock:
        if not hasattr(self, "_chain_passes"):
            self._chain_passes = self._code_transformations()
        if layer.index in self.layer_code:
            body, definitions = self.layer_code[layer.index]
            block = ExecutionBlock(layer=layer, body=[body], definitions=list(definitions))
        else:
            block = ExecutionBlock(layer=layer, body=[layer.binding.template.render(layer.representation)])
        from_plugins = {id(made): extension for extension, made in self._chain_passes}
        for transformation in build_chain(self._chain_passes, layer.binding.transformations):
            if id(transformation) in from_plugins:
                block = self._apply_plugin_pass(from_plugins[id(transformation)], transformation, block)
            else:
                block = transformation.apply(block, self.ctxt)
        return block
