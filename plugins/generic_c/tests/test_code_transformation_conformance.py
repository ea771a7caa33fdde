"""A code-transformation plugin (call counters per layer) passes the core's conformance suite on generic C."""

from __future__ import annotations

from deeploy_core import CodeTransformationExtension, hookimpl
from deeploy_core.codegen.execution_block import ExecutionBlock
from deeploy_core.ir import NetworkContext
from deeploy_core.testing import CodeTransformationConformance
from deeploy_generic_c import plugin as generic_c_plugin


class CountLayerCalls:
    """Adds a static call counter per layer, incremented each time the layer runs."""

    name = "count-layer-calls"

    def apply(self, block: ExecutionBlock, ctxt: NetworkContext) -> ExecutionBlock:
        counter = f"{block.layer.c_name}_calls"
        block.definitions.append(f"static unsigned long {counter};")
        block.body.append(f"++{counter};")
        return block


class CallCounterPlugin:
    @hookimpl
    def register_code_transformations(self, register):
        register(CodeTransformationExtension(name="count-layer-calls", factory=CountLayerCalls,
                                             point="before-closure", description="per-layer call counters"))


class TestCallCounters(CodeTransformationConformance):
    plugin = CallCounterPlugin()
    plugin_name = "call-counters"
    transformation_name = "count-layer-calls"
    platform = "generic-c"
    platform_plugin = generic_c_plugin
    platform_plugin_name = "generic-c"

    def check_generated(self, files: dict[str, str]) -> None:
        assert "_calls;" in files["Network.c"] and "++dc_layer_" in files["Network.c"]
