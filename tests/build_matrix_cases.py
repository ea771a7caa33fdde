"""The networks of the differential build matrix (tests/test_build_matrix.py, bench/build_matrix.py).

Each case compiles once for generic C into an output folder; the matrix then
builds that folder many ways (:mod:`deeploy_core.testing.build_matrix`).  The
kinds, one table row group each:

``peer``, ``peer tiled``
    Deeploy's peer tests untiled, and tiled into a 16000 B L1 with double
    buffering (one of ``test_peer_tiled``'s configurations), with the input
    types Deeploy's rule reads off the data; goldens: the peers' outputs.
``fuzz float``, ``fuzz qdq``, ``fuzz qdq-fixed``
    Graphs the fuzz strategies draw from a fixed seed, untiled and tiled in
    turn; goldens: ONNX Runtime with the fuzz check's tolerances.
``repeated int8``, ``repeated float``
    Repeated identical layers (:mod:`tests.support.repeated_layers`):
    issue 29's network and its relatives; goldens: numpy or ONNX Runtime.
``cct``
    The integer ViT/CCT block of :mod:`tests.support.dialect_networks` at CCT's full size
    (64 tokens, embedding 128, MLP 512), with ITAMax and with ITAPartialMax;
    goldens: its numpy reference, bit for bit.  Compiled with a self-test, so
    ``make -C OUT test`` checks it too.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import onnx

from deeploy_core.api import CompileOptions, compile_model, reference_inputs
from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi, default_name_shim
from deeploy_core.frontend.claims import platform_claims
from deeploy_core.ir.dtypes import INT8
from deeploy_core.codegen.generated_network import GeneratedNetwork, TensorSpec
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.fuzz.graphs import FuzzGraph
from deeploy_core.testing.output_equality import Golden
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root
from tests.support.repeated_layers import (
    RepeatedNetwork,
    float_conv_chain,
    int8_elementwise_chain,
    requant_residual_chain,
)
from deeploy_core.validate.data import load_npz_by_position
from deeploy_core.validate.reference import run_reference

PLATFORM = "generic-c"
PEER_ROOT = peer_tests_root(Path(__file__).parent)
PEER_MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"
TILED_L1 = 16000
FUZZ_GRAPHS = 8
"""Graphs drawn per fuzz flavour for the whole matrix."""
FLOAT_TOLERANCE = 1e-4
"""The peer and fuzz tests' float tolerance against their goldens (absolute and relative)."""
CCT_SIZE = {"tokens": 64, "dims": 128, "hidden_width": 512}


@dataclass(frozen=True)
class Prepared:
    """What a compile needs: the model file, the options, the inputs by name and the golden's tolerance;
    ``expected`` None asks ONNX Runtime; ``fuzz`` retries a too small L1 with the size the tiler names."""

    model: Path
    options: CompileOptions
    inputs: dict[str, np.ndarray]
    expected: list[np.ndarray] | None = None
    atol: float = 0.0
    rtol: float = 0.0
    lsb: float | None = None
    fuzz: bool = False


@dataclass(frozen=True)
class MatrixCase:
    """A network of the matrix: its id (``kind/name``), table group, and how to write and type it into ``folder``."""

    name: str
    kind: str
    prepare: Callable[[Path], Prepared] = field(compare=False, repr=False)
    self_test: bool = False
    """Also write the folder's self-test (``make -C OUT test``)."""


@dataclass(frozen=True)
class CompiledCase:
    """A case compiled into ``folder``: the inputs' bytes, the outputs' layout and the golden."""

    case: MatrixCase
    folder: Path
    inputs: tuple[bytes, ...]
    specs: tuple[TensorSpec, ...]
    golden: Golden
    api: NetworkApi = DEFAULT_API


def matrix_host() -> PluginHost:
    """The built-ins and the generic C platform only (whatever else is installed)."""
    from deeploy_generic_c import plugin as generic_c_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return host


# -- the kinds ------------------------------------------------------------------------------------------------------

def _peer_case(peer: PeerTest, tiled: bool) -> MatrixCase:
    def prepare(folder: Path) -> Prepared:
        options = CompileOptions(platform=PLATFORM, input_types=peer.input_types())
        if tiled:
            options = replace(options, level_sizes={"L1": TILED_L1}, buffering="double")
        inputs = reference_inputs(peer.model, peer.inputs, input_types=options.input_types,
                                  claims=platform_claims(matrix_host(), PLATFORM))
        tolerance = FLOAT_TOLERANCE if peer.is_float else 0.0
        return Prepared(peer.model, options, inputs, load_npz_by_position(peer.outputs), tolerance, tolerance)

    kind = "peer tiled" if tiled else "peer"
    return MatrixCase(f"{kind.replace(' ', '-')}/{peer.name}", kind, prepare)


def peer_cases() -> list[MatrixCase]:
    """Every peer test untiled and tiled (none when ``../shared`` is absent)."""
    if PEER_ROOT is None:
        return []
    peers = find_peer_tests(PEER_ROOT)
    return [_peer_case(peer, tiled) for tiled in (False, True) for peer in peers]


@functools.cache
def drawn_graphs(flavour: str, count: int) -> tuple[FuzzGraph, ...]:
    """The first ``count`` graphs the fuzz strategy of ``flavour`` draws from a seed named after the flavour
    (the same on every machine: no example database, a fixed seed)."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    from deeploy_core.testing.fuzz.cases import GRAPHS

    found: list[FuzzGraph] = []

    @seed(zlib.crc32(f"build matrix {flavour}".encode()))
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(graph=GRAPHS[flavour]())
    def collect(graph: FuzzGraph) -> None:
        if len(found) < count:
            found.append(graph)

    collect()
    return tuple(found)


def _fuzz_case(flavour: str, index: int) -> MatrixCase:
    def prepare(folder: Path) -> Prepared:
        from deeploy_core.testing.fuzz.check import QUANTIZATION, TOLERANCES

        graph = drawn_graphs(flavour, FUZZ_GRAPHS)[index]
        path = folder / "model.onnx"
        onnx.save(graph.model, path)
        options = CompileOptions(platform=PLATFORM, quantization=QUANTIZATION[flavour])
        if index % 2:
            options = replace(options, level_sizes={"L1": 2048}, buffering="double")
        atol, rtol, lsb = TOLERANCES[flavour]
        return Prepared(path, options, graph.inputs(), None, atol, rtol, lsb, fuzz=True)

    return MatrixCase(f"fuzz/{flavour}/{index}", f"fuzz {flavour}", prepare)


def fuzz_cases(count: int = FUZZ_GRAPHS) -> list[MatrixCase]:
    """``count`` drawn graphs of every fuzz flavour (even ones untiled, odd ones tiled into a 2 KiB L1)."""
    from deeploy_core.testing.fuzz.cases import FLAVOURS

    return [_fuzz_case(flavour, index) for flavour in FLAVOURS for index in range(count)]


def _repeated_case(make: Callable[[], RepeatedNetwork], kind: str) -> MatrixCase:
    network_name = make().name

    def prepare(folder: Path) -> Prepared:
        network = make()
        path = folder / f"{network.name}.onnx"
        onnx.save(network.model, path)
        options = CompileOptions(platform=PLATFORM, input_types=dict(network.input_types))
        tolerance = 0.0 if network.expected is not None else FLOAT_TOLERANCE
        return Prepared(path, options, dict(network.inputs), network.expected, tolerance, tolerance)

    return MatrixCase(f"repeated/{network_name}", kind, prepare)


FOLD = "repeated/requant_residual_x2"
"""Issue 29's network: the case the slice builds at every level of every compiler."""


def repeated_cases() -> list[MatrixCase]:
    """Issue 29's network, longer chains of its block, an int8 elementwise chain and float Conv/Relu/Add blocks."""
    return [
        _repeated_case(lambda: requant_residual_chain(2), "repeated int8"),
        _repeated_case(lambda: requant_residual_chain(3), "repeated int8"),
        _repeated_case(lambda: requant_residual_chain(4), "repeated int8"),
        _repeated_case(lambda: int8_elementwise_chain(3), "repeated int8"),
        _repeated_case(lambda: int8_elementwise_chain(4), "repeated int8"),
        _repeated_case(lambda: float_conv_chain(2), "repeated float"),
        _repeated_case(lambda: float_conv_chain(3), "repeated float"),
        _repeated_case(lambda: float_conv_chain(4), "repeated float"),
    ]


def _cct_case(softmax: str) -> MatrixCase:
    def prepare(folder: Path) -> Prepared:
        from tests.support.dialect_networks import vit_block

        built = vit_block(softmax, **CCT_SIZE)
        composed = built.composer
        path = folder / f"{composed.name}.onnx"
        onnx.save(composed.model(built.outputs), path)
        options = CompileOptions(platform=PLATFORM, input_types={name: INT8 for name in composed.input_dtypes})
        inputs = {name: composed.values[name] for name in composed.input_dtypes}
        return Prepared(path, options, inputs, [composed.values[name] for name in built.outputs])

    return MatrixCase(f"cct/{softmax}", "cct", prepare, self_test=True)


def cct_cases() -> list[MatrixCase]:
    """The full-size CCT block with ITAMax and with ITAPartialMax."""
    return [_cct_case("ITAMax"), _cct_case("ITAPartialMax")]


def all_cases() -> list[MatrixCase]:
    """Every network of the matrix, in table order."""
    return [*repeated_cases(), *cct_cases(), *fuzz_cases(), *peer_cases()]


# -- compiling ------------------------------------------------------------------------------------------------------

def _compile(prepared: Prepared, host: PluginHost) -> tuple[CompileOptions, GeneratedNetwork]:
    if not prepared.fuzz:
        return prepared.options, compile_model(prepared.model, prepared.options, host)[1]
    from deeploy_core.testing.fuzz.check import compile_for
    from deeploy_core.testing.fuzz.targets import Target

    options = prepared.options
    target = Target(options.platform, dict(options.level_sizes), options.buffering)
    used, generated = compile_for(prepared.model, target, host, options.quantization)
    return used.options(options.quantization), generated


def compile_case(case: MatrixCase, host: PluginHost, folder: Path) -> CompiledCase:
    """Write ``case``'s model under ``folder``, compile it into ``folder/out`` and gather the goldens."""
    folder.mkdir(parents=True, exist_ok=True)
    prepared = case.prepare(folder)
    options, generated = _compile(prepared, host)
    expected = prepared.expected if prepared.expected is not None else run_reference(prepared.model, prepared.inputs)
    judged = None
    if options.quantization == "fixed-point":
        from deeploy_core.testing.fuzz.rounding import judged_outputs

        judged = frozenset(judged_outputs(generated.report["layers"], [spec.name for spec in generated.outputs]))
    golden = Golden(tuple(np.asarray(array) for array in expected), prepared.atol, prepared.rtol, prepared.lsb, judged)
    if case.self_test:
        from deeploy_core.codegen.self_test import Tolerance, self_test_files

        generated.self_test = self_test_files(generated.inputs, generated.outputs, prepared.inputs, expected,
                                              Tolerance(atol=prepared.atol, rtol=prepared.rtol),
                                              default_name_shim(generated.api))
    out = folder / "out"
    generated.write(out)
    inputs = tuple(np.ascontiguousarray(prepared.inputs[spec.name], dtype=spec.dtype).tobytes()
                   for spec in generated.inputs)
    return CompiledCase(case, out, inputs, tuple(generated.outputs), golden, generated.api)
