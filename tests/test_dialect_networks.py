"""Whole integer-transformer networks of Deeploy's dialect (issue 19 item 2), bit-exact on both platforms.

The single-op tests (``test_dialect_ops``, ``test_dialect_rowwise``, ...) check each op alone; these networks chain
them the way integer transformers do, so what one op hands the next (types, unsigned softmax outputs feeding a
MatMul, int32 accumulators feeding a requantisation, tiles of one layer becoming the next layer's input) is
checked too.  Every network (``tests/support/dialect_networks.py``) is built with
``tests.dialect_reference.networks.Composer``, which writes the ONNX graph (QuantLib style: default domain,
float-declared integer tensors) and evaluates the numpy reference of each node as it adds it; the requantisations
are calibrated on those reference values so the intermediate tensors use the int8 range.  The generated C (built
with -Werror) must equal the reference bit for bit untiled, tiled into a small L1 with single and double buffering,
and on the 8-core cluster, and the tiled runs must really cut the big layers into several tiles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.ir.dtypes import INT8
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin
from tests.dialect_reference.networks import Composer, saturation
from tests.support.dialect_networks import NETWORKS

L1_SINGLE, L1_DOUBLE = 2048, 3072
"""Small enough that the projections and MLP layers need several tiles, large enough for a row of each operand
(double buffering holds two slots of every streamed tile, so it needs more)."""

CONFIGURATIONS: dict[str, CompileOptions] = {
    "generic-c untiled": CompileOptions(platform="generic-c"),
    "generic-c L1 single": CompileOptions(platform="generic-c", level_sizes={"L1": L1_SINGLE}, buffering="single"),
    "generic-c L1 double": CompileOptions(platform="generic-c", level_sizes={"L1": L1_DOUBLE}, buffering="double"),
    "pulp-cluster 8 cores L1 single": CompileOptions(platform="pulp-cluster", level_sizes={"L1": L1_SINGLE},
                                                     buffering="single", cores=8),
    "pulp-cluster 8 cores L1 double": CompileOptions(platform="pulp-cluster", level_sizes={"L1": L1_DOUBLE},
                                                     buffering="double", cores=8),
}
"""The configurations of the single-op tests (``tests/support/dialect_configurations.py``), with an L1 sized for
whole networks instead of one op."""


NETWORK_OPS: dict[str, tuple[str, ...]] = {
    "ViT block, ITAMax": ("iLayerNorm", "ITAMax", "iGELU", "IntegerMean"),
    "ViT block, ITAPartialMax": ("iLayerNorm", "RQMatMul", "ITAPartialMax", "RQGemm", "RequantizediGELU",
                                 "IntegerMean"),
    "RMSNorm decoder block": ("iRMSNorm", "ITAMax", "RQIntegerDiv", "RequantizedAdd", "iHardswish"),
    "iHardswish CNN": ("RequantizediHardswish", "iNoNorm", "IntegerMean"),
}
"""The dialect ops each network must compile to (checked against the compiled layers' kernels)."""


@pytest.fixture(scope="module")
def host() -> PluginHost:
    """Both bundled platforms and nothing else that happens to be installed."""
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


@pytest.mark.parametrize("network", list(NETWORKS))
def test_the_reference_uses_the_int8_range(network: str) -> None:
    # Every 8-bit tensor (requantised, normalised, softmax output) spans at least an eighth of its range and sits on
    # its bounds for at most 5% of its elements: the calibration neither crushes values to a few levels nor clips
    # them wholesale, so the bit-exact comparison means something.
    composed = NETWORKS[network]().composer
    assert composed.ranges
    for name, (low, high) in composed.ranges.items():
        values = np.asarray(composed.values[name], np.int64)
        assert low <= values.min() and values.max() <= high, (name, values.min(), values.max())
        assert values.max() - values.min() >= (high - low) / 8, (name, np.histogram(values, bins=8))
        assert saturation(values, low, high) <= 0.05, (name, np.histogram(values, bins=8))


def _layer(report: dict[str, Any], node: str) -> dict[str, Any]:
    """The compiled layer that computes ONNX node ``node`` (alone, or fused with the requantisation after it)."""
    layers = report["layers"]
    assert isinstance(layers, list)
    return next(layer for layer in layers if layer["node"] in (node, f"{node}_rq"))


def _options(configuration: str, composed: Composer) -> CompileOptions:
    """A configuration with the network's integer graph inputs typed int8 (QuantLib declares them FLOAT)."""
    base = CONFIGURATIONS[configuration]
    return CompileOptions(platform=base.platform, level_sizes=dict(base.level_sizes), buffering=base.buffering,
                          cores=base.cores, input_types={name: INT8 for name in composed.input_dtypes})


@pytest.mark.parametrize("network", list(NETWORKS))
def test_network_compiles_to_identical_files(network: str, host: PluginHost, tmp_path: Path) -> None:
    # The same network saved in two different folders and compiled twice (tiled, on the cluster, double
    # buffered: the path with the most solver and scheduling decisions) gives byte-identical C and report.json.
    built = NETWORKS[network]()
    written = []
    for run in ("first", "second"):
        model = tmp_path / run / f"{built.composer.name}.onnx"
        model.parent.mkdir()
        onnx.save(built.composer.model(built.outputs), model)
        _, generated = compile_model(model, _options("pulp-cluster 8 cores L1 double", built.composer), host)
        generated.write(tmp_path / run / "out")
        written.append({path.relative_to(tmp_path / run / "out").as_posix(): path.read_bytes()
                        for path in sorted((tmp_path / run / "out").rglob("*")) if path.is_file()})
    assert "report.json" in written[0] and any(name.endswith(".c") for name in written[0])
    assert written[0] == written[1]


@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
@pytest.mark.parametrize("network", list(NETWORKS))
def test_network_is_bit_exact(network: str, configuration: str, host: PluginHost, tmp_path: Path) -> None:
    built = NETWORKS[network]()
    composed = built.composer
    model = tmp_path / f"{composed.name}.onnx"
    onnx.save(composed.model(built.outputs), model)
    base = CONFIGURATIONS[configuration]
    options = _options(configuration, composed)
    inputs = {name: composed.values[name] for name in composed.input_dtypes}
    expected = [composed.values[name] for name in built.outputs]
    generated, result = validate_with_data(model, options, host, inputs, expected, atol=0.0, rtol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    kernels = {str(layer["kernel"]).split(" ")[0] for layer in generated.report["layers"]}
    assert set(NETWORK_OPS[network]) <= kernels, sorted(kernels)
    if "L1" not in configuration:
        assert "tiling" not in generated.report
        return
    tiled = {layer["layer"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    for node in built.big_layers:
        layer = _layer(generated.report, node)
        assert "tiling" in layer["code_transformations"], node
        assert tiled[layer["node"]] >= 2, (node, tiled)
        if base.platform == "pulp-cluster":
            # On the cluster the big layers' work is shared among the cores, not left to one of them.
            shares = next(entry for entry in generated.report["tiling"]["layers"] if entry["layer"] == layer["node"])
            assert sum(1 for work in shares["cluster"]["work"] if work) >= 2, (node, shares["cluster"])
