"""float16 is a carried storage type: the importer, the weights and the reports know it, C sees uint16_t bits.

Cast/CastLike to and from float16 and data movement run on it (the
generic-c plugin's test_cast.py runs them); arithmetic kernels ask for
float32 and refuse it.  ``uint16_t`` still names uint16, not float16.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from deeploy_core.codegen.literals import c_array_values
from deeploy_core.codegen.weight_literals import bit_pattern_rows, bits_c_type, has_bit_patterns
from deeploy_core.ir.dtypes import FLOAT16, FLOAT32, UINT16, from_name, from_numpy, from_onnx


def test_float16_is_stored_as_its_bits_and_uint16_t_still_means_uint16() -> None:
    assert from_onnx(TensorProto.FLOAT16) is FLOAT16 and from_numpy(np.dtype(np.float16)) is FLOAT16
    assert from_name("float16") is FLOAT16 and from_name("uint16_t") is UINT16
    assert FLOAT16.c_type == "uint16_t" and FLOAT16.size == 2 and FLOAT16.is_float
    assert FLOAT16.storage_only and not FLOAT32.storage_only and not UINT16.storage_only


def test_float16_weights_are_written_as_exact_bit_patterns() -> None:
    values = np.array([1.5, -0.0, 65504.0, np.inf], dtype=np.float16)
    assert has_bit_patterns(values.dtype) and bits_c_type(values.dtype) == "uint16_t"
    assert bit_pattern_rows(values) == "0x3e00,0x8000,0x7bff,0x7c00,"


def test_float16_literals_in_code_are_bit_patterns_too() -> None:
    """Kernels write constants such as Pad's value with c_array_values: a float16 must be its bits there as well."""
    assert c_array_values(np.array([1.5, -2.0], dtype=np.float16)) == "15872, 49152"
