"""``compile --inputs/--outputs``: compiling with sample data, which also writes the folder's self-test.

The data change the compile the way they change ``validate``: float-declared
inputs whose arrays hold integers take Deeploy's integer types (same rule,
same fallbacks, :mod:`deeploy_core.validate.sample_types`), so the folder a
user receives is the network ``validate`` checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
import numpy as np

from deeploy_core.api import CompileOptions, compile_model, reference_inputs
from deeploy_core.codegen.api_names import default_name_shim
from deeploy_core.cli.tolerance_options import ATOL_HELP, RTOL_HELP
from deeploy_core.codegen.self_test import self_test_files
from deeploy_core.deployer import ComposedDeployer
from deeploy_core.progress import ProgressLike
from deeploy_core.errors import DeeployError
from deeploy_core.frontend.claims import platform_claims
from deeploy_core.ir import DataType
from deeploy_core.network import GeneratedNetwork
from deeploy_core.plugins import PluginHost
from deeploy_core.validate.data import load_npz_by_position
from deeploy_core.validate.reference import ReferenceUnavailable, run_reference
from deeploy_core.validate.sample_types import sample_types, with_sample_types
from deeploy_core.tolerance import Tolerance, rule_for


def self_test_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--inputs, --outputs and the tolerances of the self-test (validate's defaults)."""
    decorators = [
        click.option("--inputs", "inputs_npz", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                     help="Sample inputs (.npz, by position): also write a self-test (make -C OUTPUT test); "
                          "integer input types are picked from them as validate --inputs does."),
        click.option("--outputs", "outputs_npz", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                     help="Expected outputs for the self-test (.npz, by position; needs --inputs); "
                          "default: ONNX Runtime on --inputs."),
        click.option("--atol", type=float, default=None, help=f"Self-test: {ATOL_HELP}"),
        click.option("--rtol", type=float, default=None, help=f"Self-test: {RTOL_HELP}"),
        click.option("--lsb-tolerance", type=click.FloatRange(0), default=None,
                     help="Self-test: judge quantised outputs in quantisation steps (default: 1 with "
                          "--quantization fixed-point)."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def compile_with_data(
    model: Path, options: CompileOptions, host: PluginHost, inputs_npz: Path, outputs_npz: Path | None,
    tolerance: Tolerance, progress: ProgressLike = None, state_dir: Path | None = None,
    notice: Callable[[str], None] | None = None,
) -> tuple[ComposedDeployer, GeneratedNetwork, dict[str, str]]:
    """Compile with the input types the data call for; also returns the self-test sources of those data
    (relative path → text, for :attr:`GeneratedNetwork.self_test`)."""
    inputs = reference_inputs(model, inputs_npz, input_shapes=options.input_shapes, input_types=options.input_types,
                              claims=platform_claims(host, options.platform))
    expected = load_npz_by_position(outputs_npz) if outputs_npz is not None else None

    def attempt(input_types: dict[str, DataType]) -> tuple[ComposedDeployer, GeneratedNetwork]:
        return compile_model(model, replace(options, input_types=input_types), host, progress, state_dir)

    deployer, generated = with_sample_types(attempt, options.input_types,
                                            sample_types(model, inputs_npz, options.input_types), notice)
    if expected is None:
        try:
            expected = run_reference(model, inputs)
        except ReferenceUnavailable as error:  # the folder is still worth having: without its self-test
            if notice is not None:
                notice(f"warning: no self-test written: {error}")
            return deployer, generated, {}
    if notice is not None:
        for line in unjudgeable_outputs(generated, expected, tolerance):
            notice(line)
    return deployer, generated, self_test_files(generated.inputs, generated.outputs, inputs, expected, tolerance,
                                                default_name_shim(generated.api))


def unjudgeable_outputs(generated: GeneratedNetwork, expected: list[np.ndarray], tolerance: Tolerance) -> list[str]:
    """One warning per output whose expected values are too small for the scale rule: its self-test will fail,
    which the user should hear when compiling rather than from ``make test`` on the target."""
    lines = []
    for spec, array in zip(generated.outputs, expected):
        rule = rule_for(tolerance, spec.dtype, spec.step)
        values = np.asarray(array, dtype=np.float64)
        scale = float(np.abs(values[np.isfinite(values)]).max(initial=0.0))
        if rule.kind == "scale" and values.size > 0 and scale < rule.smallest_scale:
            size = "all zeros" if scale == 0 else f"at most {scale:.3g} in magnitude (subnormal)"
            lines.append(f"warning: output '{spec.name}': the expected values are {size}, too small to judge by "
                         f"relative error and cosine, so make test will fail; give --atol to judge it by absolute "
                         f"error")
    return lines


def check_data_options(inputs_npz: Path | None, outputs_npz: Path | None) -> None:
    """--outputs alone means nothing: the expected outputs belong to inputs."""
    if outputs_npz is not None and inputs_npz is None:
        raise DeeployError("--outputs needs --inputs (the expected outputs are those of given inputs)")
