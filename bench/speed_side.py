"""Build one network's program with whichever ``deeploy_core`` is importable; print where it is (JSON).

bench/run_speed.py runs this script twice per network and compiler: once as
is (the working tree) and once with ``PYTHONPATH`` pointing at an extracted
older commit, so the same few API calls build both sides with each side's own
code generator and runtime.  It uses only calls that exist unchanged since
commit 080000f (compile_model, build_executable, run_network, reference_inputs,
data_input_types), checks the program's outputs against the expected ones
(exactly for integer networks), and leaves the program and its input file in
``--out`` for the driver to time.

    python bench/speed_side.py MODEL INPUTS OUTPUTS --out DIR [--integer] [--tolerance 1e-4]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

import deeploy_core
from deeploy_core.api import CompileOptions, compile_model, reference_inputs
from deeploy_core.cli.model_options import data_input_types
from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_core.validate.data import load_npz_by_position


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path)
    parser.add_argument("inputs", type=Path)
    parser.add_argument("outputs", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--integer", action="store_true", help="type inputs by Deeploy's rule; compare exactly")
    parser.add_argument("--tolerance", type=float, default=1e-4, help="absolute tolerance for float networks")
    args = parser.parse_args()
    host = PluginHost.discover(PluginSelection.from_options(os.environ))
    types = data_input_types(args.model, args.inputs) if args.integer else {}
    _, generated = compile_model(args.model, CompileOptions(platform="generic-c", input_types=types), host)
    cache = args.out / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    executable = build_executable(generated, args.out / "build", Toolchain.from_environment(), cache)
    inputs = reference_inputs(args.model, args.inputs)
    actual, _ = run_network(executable, generated, inputs, 1)
    expected = load_npz_by_position(args.outputs, len(actual))
    tolerance = 0.0 if args.integer else args.tolerance
    worst = max(
        float(np.max(np.abs(a.astype(np.float64) - e.reshape(a.shape).astype(np.float64)), initial=0.0))
        for a, e in zip(actual, expected)
    )
    json.dump({
        "executable": str(executable),
        "input_file": str(executable.parent / "inputs.bin"),
        "ok": worst <= tolerance,
        "max_error": worst,
        "core": str(Path(deeploy_core.__file__).resolve().parent.parent),
    }, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
