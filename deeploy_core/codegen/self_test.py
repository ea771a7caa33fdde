"""The self-test of an output folder: the network run on known inputs, checked against expected outputs.

``compile --inputs`` writes it so that whoever receives the folder can check
their build with nothing but a C compiler and ``make`` (``make test``).  The
data are C arrays: inputs as their exact bytes, expected outputs as doubles
printed with 17 significant digits (exact for every float32/float64 and for
integers up to 2**53).  The verdict is ``validate``'s
(:mod:`deeploy_core.tolerance`, :func:`deeploy_core.validate.compare.judge_output`),
computed in C in double: a float output by its largest error relative to the
expected values' max ``|value|`` (found by the C code) and by cosine
similarity, failing when that max is zero or subnormal; element-wise
``|actual - expected| <= atol + rtol * |expected|`` when an absolute
tolerance was given; integers exactly; quantised outputs within
``lsb_tolerance`` steps.  NaN equals NaN, an infinity itself.  Only
``printf``, ``memcpy`` and ``math.h`` are used, so the same main runs under
semihosting on a microcontroller.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from deeploy_core.codegen.build_files import SELF_TEST_SOURCES
from deeploy_core.errors import DeeployError
from deeploy_core.ir.names import c_string
from deeploy_core.ir.tensor_spec import TensorSpec
from deeploy_core.tolerance import Rule, Tolerance, rule_for

C_TYPES = {
    "float32": "float", "float64": "double", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t",
    "uint16": "uint16_t", "int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t",
    "bool": "uint8_t",
}

__all__ = ["C_TYPES", "Tolerance", "c_string", "self_test_files"]


def _double(value: float) -> str:
    """A double constant (NAN is a float in math.h: cast, so no float is promoted implicitly)."""
    if math.isnan(value):
        return "(double)NAN"
    if math.isinf(value):
        return "HUGE_VAL" if value > 0 else "-HUGE_VAL"
    return repr(float(value))


def _rows(items: Sequence[str], per_line: int) -> str:
    return ",\n".join("    " + ", ".join(items[start:start + per_line]) for start in range(0, len(items), per_line))


CHECK_SOURCE = r"""/* One output against its expected values, in double; prints every measure, returns 1 on failure.
   by_scale (float outputs): every |actual - expected| <= bound * scale, cosine >= min_cosine and
   scale >= smallest, scale being max |expected|; otherwise every |actual - expected| <= bound +
   relative * |expected|.  NaN equals NaN and an infinity itself; any other non-finite value on either
   side is a mismatch.  The cosine is over the finite pairs, both divided by the scale first. */
static int check(const char *name, const double *actual, const double *expected, size_t count, int by_scale,
                 double bound, double relative, double min_cosine, double smallest) {
    double scale = 0.0, worst = 0.0, dot = 0.0, actual_norm = 0.0, expected_norm = 0.0, cosine;
    size_t bad = 0, i;
    int too_small, failed;
    for (i = 0; i < count; ++i) {
        if (isfinite(expected[i]) && fabs(expected[i]) > scale) scale = fabs(expected[i]);
    }
    for (i = 0; i < count; ++i) {
        double a = actual[i], e = expected[i], error = 0.0, limit;
        int unequal = 0;
        if (isfinite(a) && isfinite(e)) {
            double a_unit = scale > 0.0 ? a / scale : a, e_unit = scale > 0.0 ? e / scale : e;
            error = fabs(a - e);
            dot += a_unit * e_unit;
            actual_norm += a_unit * a_unit;
            expected_norm += e_unit * e_unit;
        } else if (!((isnan(a) && isnan(e)) || a == e)) {
            error = HUGE_VAL;
            unequal = 1;
        }
        if (error > worst) worst = error;
        limit = by_scale ? bound * scale : bound + relative * (isfinite(e) ? fabs(e) : 0.0);
        if (unequal || error > limit) ++bad;
    }
    if (actual_norm > 0.0 && expected_norm > 0.0) cosine = dot / (sqrt(actual_norm) * sqrt(expected_norm));
    else cosine = (actual_norm == 0.0 && expected_norm == 0.0) ? 1.0 : 0.0;
    too_small = by_scale && count > 0 && !(scale >= smallest);
    failed = too_small || bad != 0 || (by_scale && cosine < min_cosine);
    printf("output '%s': max |expected| %.6g, max abs error %.6g", name, scale, worst);
    if (scale > 0.0) printf(", max rel error %.6g", worst / scale);
    printf(", cosine %.9f, mismatches %lu/%lu", cosine, (unsigned long)bad, (unsigned long)count);
    if (by_scale) printf(" (bound %.3g x max |expected|, cosine >= %.9g)", bound, min_cosine);
    else printf(" (bound %.6g + %.3g*|expected|)", bound, relative);
    printf(": %s\n", too_small ? "TOO SMALL TO JUDGE" : failed ? "MISMATCH" : "ok");
    if (too_small) {
        printf("output '%s': the expected values are %s, too small to judge by relative error and cosine; "
               "compile with --atol to judge it by absolute error\n", name, scale > 0.0 ? "subnormal" : "all zeros");
    }
    return failed;
}
"""
"""The C twin of :func:`deeploy_core.validate.compare.judge_output` (same measures, same verdict)."""


def _rule_arguments(rule: Rule) -> str:
    """check()'s arguments after the count: by_scale, bound, relative, min_cosine, smallest."""
    if rule.kind == "scale":
        return f"1, {_double(rule.bound)}, 0.0, {_double(rule.min_cosine)}, {_double(rule.smallest_scale)}"
    return f"0, {_double(rule.bound)}, {_double(rule.relative)}, 0.0, 0.0"


def _data_source(inputs: list[tuple[TensorSpec, np.ndarray]], outputs: list[tuple[TensorSpec, np.ndarray]]) -> str:
    lines = ["/* Generated by deeploy_core: self-test data (inputs as bytes, expected outputs as doubles). */",
             "#include <math.h>", "#include <stddef.h>", ""]
    for index, (spec, array) in enumerate(inputs):
        raw = np.ascontiguousarray(array, dtype=np.dtype(spec.dtype)).tobytes()
        lines.append(f"const unsigned char dc_selftest_input_{index}[{max(len(raw), 1)}] = {{")
        lines.append(_rows([f"0x{byte:02x}" for byte in raw] or ["0"], 16))
        lines.append("};")
    names = ", ".join(f"dc_selftest_input_{index}" for index in range(len(inputs))) or "0"
    lines.append("/* Every input, for programs that loop over them (make profile). */")
    lines.append(f"const unsigned char *const dc_selftest_inputs[{max(len(inputs), 1)}] = {{{names}}};")
    for index, (_, array) in enumerate(outputs):
        values = [_double(value) for value in np.asarray(array, dtype=np.float64).reshape(-1).tolist()]
        lines.append(f"const double dc_selftest_expected_{index}[{max(len(values), 1)}] = {{")
        lines.append(_rows(values or ["0.0"], 6))
        lines.append("};")
    return "\n".join(lines) + "\n"


def _main_source(inputs: list[tuple[TensorSpec, np.ndarray]], outputs: list[tuple[TensorSpec, np.ndarray]],
                 tolerance: Tolerance, shim: Sequence[str]) -> str:
    lines = [
        "/* Generated by deeploy_core: runs the network on the stored inputs and compares every output. */",
        "#include <math.h>",
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <string.h>",
        '#include "Network.h"',
        *shim,
        "",
        *(f"extern const unsigned char dc_selftest_input_{index}[];" for index in range(len(inputs))),
        *(f"extern const double dc_selftest_expected_{index}[];" for index in range(len(outputs))),
        "",
        *CHECK_SOURCE.splitlines(),
        "",
        "int main(void) {",
        "    int failed = 0;",
        "    InitNetwork();",
    ]
    for index, (spec, _) in enumerate(inputs):
        lines.append(f"    memcpy(DeeployNetwork_inputs[{index}], dc_selftest_input_{index}, "
                     f"DeeployNetwork_inputs_bytes[{index}]);  /* {spec.dtype} */")
    lines.append("    RunNetwork();")
    for index, (spec, array) in enumerate(outputs):
        c_type = C_TYPES[spec.dtype]
        count = int(np.asarray(array).size)
        rule = rule_for(tolerance, spec.dtype, spec.step)
        lines += [
            "    {",
            f"        static double actual[{max(count, 1)}];",
            f"        const {c_type} *values = (const {c_type} *)DeeployNetwork_outputs[{index}];",
            f"        for (size_t i = 0; i < {count}u; ++i) actual[i] = (double)values[i];",
            f"        failed |= check({c_string(spec.name)}, actual, dc_selftest_expected_{index}, {count}u, "
            f"{_rule_arguments(rule)});",
            "    }",
        ]
    lines += [
        '    printf("%s\\n", failed ? "self-test FAILED" : "self-test passed");',
        "    return failed;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def self_test_files(
    input_specs: Sequence[TensorSpec], output_specs: Sequence[TensorSpec], inputs: Mapping[str, np.ndarray],
    expected: Sequence[np.ndarray], tolerance: Tolerance, shim: Sequence[str] = (),
) -> dict[str, str]:
    """The self-test sources (relative path → text) for ``inputs`` by name and ``expected`` by output position.

    ``shim``: C lines after ``#include "Network.h"`` that map the default names the main uses onto the network's
    API (:func:`deeploy_core.codegen.api_names.default_name_shim`; empty for the default API).
    """
    missing = [spec.name for spec in input_specs if spec.name not in inputs]
    if missing:
        raise DeeployError(f"no data for input(s) {', '.join(missing)}; give every graph input in --inputs")
    if len(expected) < len(output_specs):
        raise DeeployError(f"{len(expected)} expected outputs for {len(output_specs)} network outputs; "
                           "give one array per output in --outputs")
    bound_inputs = [(spec, np.asarray(inputs[spec.name])) for spec in input_specs]
    bound_outputs = []
    for spec, array in zip(output_specs, expected):
        size = int(np.prod(spec.shape, dtype=np.int64))
        if np.asarray(array).size != size:
            raise DeeployError(f"output {spec.name!r}: {np.asarray(array).size} expected values, the network "
                               f"writes {size}; check the order of the arrays in --outputs")
        if spec.dtype not in C_TYPES:
            raise DeeployError(f"output {spec.name!r}: element type {spec.dtype} has no self-test comparison")
        bound_outputs.append((spec, np.asarray(array)))
    main_name, data_name = SELF_TEST_SOURCES
    return {main_name: _main_source(bound_inputs, bound_outputs, tolerance, shim),
            data_name: _data_source(bound_inputs, bound_outputs)}
