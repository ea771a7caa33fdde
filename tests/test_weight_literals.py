"""Weights are written in bulk, exactly and compactly (issue 21 item 1).

Float weights go out as IEEE-754 bit patterns into a union of patterns and
floats: the C program must read back every bit (NaN payloads, signed zeros,
subnormals, infinities included), the file must stay within three times the
raw bytes, and formatting must not depend on where the million-value chunks
fall.  Integer weights keep their decimal spelling.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.codegen import weight_literals
from deeploy_core.codegen.weight_literals import PER_LINE, bit_pattern_rows, integer_rows

SPECIAL = np.array([0.1, -2.5, 1e-38, 3.4028235e38, 1.0 / 3.0, 0.0, -0.0, 7e-45, np.inf, -np.inf], dtype=np.float32)


def read_back(tmp_path: Path, values: np.ndarray) -> list[str]:
    """The bit patterns a C program reads through the float view of the union the weights file declares."""
    c_type, bits, width = ("float", "uint32_t", 8) if values.dtype == np.float32 else ("double", "uint64_t", 16)
    program = tmp_path / "check.c"
    program.write_text(
        "#include <inttypes.h>\n#include <stdio.h>\n#include <string.h>\n"
        f"union weights {{ {bits} bits[{values.size}]; {c_type} values[{values.size}]; }};\n"
        f"static const union weights w = {{{{\n{bit_pattern_rows(values)}\n}}}};\n"
        "int main(void) {\n"
        f"    for (unsigned i = 0; i < {values.size}u; ++i) {{ {bits} b; memcpy(&b, &w.values[i], sizeof b);"
        f" printf(\"%0{width}\" PRIx{width * 4} \"\\n\", b); }}\n"
        "    return 0;\n}\n", encoding="utf-8")
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", str(program), "-o",
                    str(tmp_path / "check")], check=True)
    return subprocess.run([str(tmp_path / "check")], capture_output=True, text=True, check=True).stdout.split()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_weights_read_back_bit_for_bit(dtype: type, tmp_path: Path) -> None:
    values = np.concatenate([SPECIAL.astype(dtype), np.random.default_rng(0).standard_normal(40).astype(dtype)])
    nan = np.array([0x7FC00123 if dtype == np.float32 else 0x7FF8000000000123],
                   dtype=np.uint32 if dtype == np.float32 else np.uint64).view(dtype)
    values = np.concatenate([values, nan])
    width = np.dtype(dtype).itemsize * 2
    assert read_back(tmp_path, values) == [f"{bits:0{width}x}" for bits in values.view(f"u{np.dtype(dtype).itemsize}")]


def test_chunks_join_into_whole_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    values = np.random.default_rng(1).standard_normal(5 * PER_LINE + 3).astype(np.float32)
    whole = bit_pattern_rows(values)
    monkeypatch.setattr(weight_literals, "_CHUNK", 2 * PER_LINE)
    assert bit_pattern_rows(values) == whole
    lines = whole.splitlines()
    assert [len(line.split(",")) - 1 for line in lines] == [PER_LINE] * 5 + [3]


def test_integer_weights_in_decimal() -> None:
    assert integer_rows(np.array([-128, 127], np.int8)) == "-128,127,"
    assert integer_rows(np.array([-(2**31), 5], np.int32)) == "(-2147483647 - 1),5,"
    assert integer_rows(np.array([5], np.int64)) == "INT64_C(5),"
    assert integer_rows(np.array([True, False])) == "1,0,"
    assert integer_rows(np.arange(PER_LINE + 1, dtype=np.uint8)).count("\n") == 1


def test_a_float_network_s_weights_file_is_within_three_times_its_raw_bytes(tmp_path: Path) -> None:
    pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
    from deeploy_core.api import CompileOptions, compile_model
    from deeploy_core.plugins import PluginHost
    from deeploy_generic_c import plugin

    weight = np.random.default_rng(2).standard_normal((256, 1024)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "wide",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1024])],
                              [numpy_helper.from_array(weight, "w")])
    path = tmp_path / "wide.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    host = PluginHost()
    host.add_plugin(plugin, name="generic-c", distribution="deeploy-generic-c")
    _, generated = compile_model(path, CompileOptions(platform="generic-c"), host)
    size = len(generated.files["Network_weights.c"].encode())
    assert size <= 3 * weight.nbytes, size / weight.nbytes
