"""The Mish plugin meets the operator contract on both platforms it claims."""

from __future__ import annotations

import numpy as np

from deeploy_core.testing import OperatorConformance, PluginConformance
from deeploy_generic_c import plugin as generic_c
from deeploy_pulp_cluster import plugin as pulp_cluster

from deeploy_example_mish import plugin as mish


def mish_reference(x: np.ndarray) -> np.ndarray:
    """x * tanh(softplus(x)) in float64; logaddexp(0, x) is softplus without overflow."""
    wide = x.astype(np.float64)
    return wide * np.tanh(np.logaddexp(0.0, wide))


class TestMishPlugin(PluginConformance):
    plugin = mish
    plugin_name = "mish"


class TestMishOperator(OperatorConformance):
    plugin = mish
    plugin_name = "mish"
    platform_plugins = ((generic_c, "generic-c"), (pulp_cluster, "pulp-cluster"))
    platforms = ("generic-c", "pulp-cluster")
    op_type = "Mish"
    opset = 18
    input_shapes = ((2, 3, 17, 13),)

    def reference(self, *inputs: np.ndarray) -> np.ndarray:
        return mish_reference(inputs[0])

    def make_inputs(self, rng: np.random.Generator) -> list[np.ndarray]:
        """Both tails matter: softplus switches formula above 20 and Mish vanishes far below zero."""
        x = rng.standard_normal(self.input_shapes[0]) * 4
        x.reshape(-1)[:6] = (-90.0, -20.0, 0.0, 19.9, 20.1, 60.0)
        return [x.astype(np.float32)]
