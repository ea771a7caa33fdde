"""Which exported network is validated how: model, exporter, float or int8 (and quantisation mode), platform.

The test module and ``bench/exporter_table.py`` share this list, so the
table a benchmark prints and what CI checks are the same set of rows.  Each
case knows the bound it is judged by (see :class:`Bound`) and, where the
compiler refuses it today (an op no platform implements yet), why: the test
then expects that refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.models.export import EXPORTERS, exported, quantised
from tests.models.zoo import BY_NAME, ZOO, ZooModel

FLOAT_RELATIVE_ERROR = 1e-4
"""Float outputs: max |error| over max |reference| (float32 sums in another order stay far below this)."""


@dataclass(frozen=True)
class Bound:
    """What a case must meet: a float error relative to the output's scale, or a number of quantisation steps."""

    relative: float | None = None
    lsb: float | None = None
    per_layer: bool = False
    """``lsb`` holds for every quantised layer given ONNX Runtime's values of its inputs, not for the outputs
    (:mod:`deeploy_core.testing.layerwise`): fixed-point mode's TFLite arithmetic against ONNX Runtime."""

    def describe(self) -> str:
        if self.lsb is not None:
            text = "bit-exact" if self.lsb == 0 else f"<= {self.lsb:g} LSB"
            return f"every layer {text} given ONNX Runtime's inputs" if self.per_layer else text
        return f"rel <= {self.relative:g}"


@dataclass(frozen=True)
class Case:
    model: ZooModel
    exporter: str
    quantization: str | None
    """None for the float model; ``exact`` or ``fixed-point`` for its int8 QDQ version."""
    platform: str = "generic-c"
    known_failure: str | None = None
    """Why the compiler refuses this case today (a missing op), or None: the test expects that clean refusal."""
    l2: int | None = None
    """pulp-cluster's L2 in bytes instead of its 512 KiB default (None: the default; what L2 cannot hold lives in L3)."""

    @property
    def precision(self) -> str:
        return "float32" if self.quantization is None else "int8"

    @property
    def id(self) -> str:
        parts = [self.model.name, self.exporter, self.quantization or "float", self.platform]
        return "-".join(parts)

    slow: bool = False
    """Minutes to compile even though the network is small (marker ``heavy_model``, like the heavy networks)."""

    @property
    def heavy(self) -> bool:
        return self.model.heavy or self.slow

    def path(self) -> Path:
        """The ONNX file (exported or quantised on first use, then cached)."""
        return exported(self.model, self.exporter) if self.quantization is None else quantised(self.model)

    def bound(self) -> Bound:
        """docs/fixed-point.rst's guarantees: exact mode is bit-exact where the platform has ONNX Runtime's fused
        kernels (generic-c) and within a step elsewhere (float sums round differently); fixed-point computes
        TFLite's arithmetic, within one step of ONNX Runtime per layer (its outputs have no bound against ONNX
        Runtime: a step of difference grows through the layers after it)."""
        if self.quantization is None:
            return Bound(relative=FLOAT_RELATIVE_ERROR)
        if self.quantization == "fixed-point":
            return Bound(lsb=1.0, per_layer=True)
        if self.platform == "generic-c":
            return Bound(lsb=0.0)
        return Bound(lsb=1.0)


_REFUSED: dict[tuple[str, str], str] = {}
"""(model, exporter) pairs the compiler refuses today, with the reason (an op no platform implements yet); none since
Resize landed on both platforms (mobilevit_xxs_32 upsamples its last stage bilinearly)."""

_REFUSED_ON_CLUSTER: dict[tuple[str, str], str] = {}
"""Pairs pulp-cluster refuses today with its default sizes (generic-c compiles them); none since Resize tiles on the
cluster (the U-Net's 16x16 to 32x32 upsampling needed 82 KB of L1 untiled)."""

QUANTISED = ("resnet18", "resnet18_narrow", "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x0_5")
"""CNNs whose int8 QDQ version (ONNX Runtime's quantize_static of the legacy export) is validated."""

ON_CLUSTER = (("squeezenet1_1", "legacy", None), ("squeezenet1_1", "legacy", "exact"),
              ("squeezenet1_1", "legacy", "fixed-point"), ("deit_small", "dynamo", None), ("lstm", "legacy", None),
              ("resnet18", "legacy", None), ("unet", "legacy", None), ("unet", "dynamo", None),
              ("separable_se_cnn", "legacy", None), ("separable_se_cnn", "dynamo", None))
"""The few cases also validated on pulp-cluster (tiled over its memory levels: slower to compile), with its default
sizes: SqueezeNet's 2.9 MB and ResNet-18's 44.7 MB of float weights live in L3 (64 MiB), streamed through L2."""


SLOW_FLOAT_EXPORTS = (("efficientvit_b0", "dynamo"), ("mobilenet_v2", "dynamo"), ("mobilevit_xxs", "dynamo"),
                      ("mobilevit_xxs_32", "dynamo"), ("mobilenet_v3_small", "dynamo"))
"""Float exports left to ``-m heavy_model`` (10-25 s each; the same networks' legacy exports stay in the suite)."""


def _case(name: str, exporter: str, quantization: str | None, platform: str = "generic-c") -> Case:
    l2 = None
    # Without ONNX Runtime's fused kernels, exact mode dequantises every weight into pulp-cluster's arena, and tiling
    # that arena takes two minutes.
    slow = platform == "pulp-cluster" and quantization == "exact"
    # Fixed-point cases are judged per layer (every quantised layer compiled, built and run alone): a minute each;
    # the suite keeps SqueezeNet on generic-c, the others run with -m heavy_model.
    slow = slow or (quantization == "fixed-point" and (name, platform) != ("squeezenet1_1", "generic-c"))
    # CI's time budget: the two slowest float networks keep one export each (their int8 and cluster cases stay).
    slow = slow or (quantization is None and platform == "generic-c" and (name, exporter) in SLOW_FLOAT_EXPORTS)
    refused = _REFUSED.get((name, exporter))
    if platform == "pulp-cluster":
        refused = refused or _REFUSED_ON_CLUSTER.get((name, exporter))
    return Case(BY_NAME[name], exporter, quantization, platform, refused, l2, slow)


def all_cases() -> list[Case]:
    """Every model with both exporters on generic-c, the int8 versions in both modes, then the cluster's few."""
    cases = [_case(model.name, exporter, None) for model in ZOO for exporter in EXPORTERS]
    cases += [_case(name, "legacy", mode) for name in QUANTISED for mode in ("exact", "fixed-point")]
    cases += [_case(name, exporter, mode, "pulp-cluster") for name, exporter, mode in ON_CLUSTER]
    return cases
