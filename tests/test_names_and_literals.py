"""Model-derived names never reach C verbatim; constants are emitted exactly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from deeploy_core.codegen.literals import c_array_values
from deeploy_core.ir.names import C_KEYWORDS, CNameMangler, c_comment_text

HOSTILE = ["int", "a b", 'q"uote', "new\nline", "*/ evil /*", "#include <x>", "ünïcödé", "0starts_with_digit", "", "a-b", "a_b"]


def test_mangled_names_are_c_identifiers_and_unique() -> None:
    mangler = CNameMangler("dc")
    names = [mangler.mangle(name, "act") for name in HOSTILE]
    assert len(set(names)) == len(names)
    for name in names:
        assert name.isascii() and name.replace("_", "a").isalnum() and not name[0].isdigit()
        assert name not in C_KEYWORDS and name.startswith("dc_act_")
    assert mangler.mangle("a-b", "act") == names[HOSTILE.index("a-b")], "the same name maps to the same identifier"


def test_long_names_are_shortened_but_stay_distinct() -> None:
    mangler = CNameMangler()
    first, second = mangler.mangle("x" * 300 + "1"), mangler.mangle("x" * 300 + "2")
    assert first != second and len(first) < 64 and len(second) < 64


@pytest.mark.parametrize("text", HOSTILE)
def test_comment_text_cannot_escape_a_comment(text: str) -> None:
    safe = c_comment_text(text)
    assert "*/" not in safe and "\n" not in safe and safe.isascii()


def test_float_literals_round_trip_exactly(tmp_path: Path) -> None:
    values = np.array([0.1, -2.5, 1e-38, 3.4028235e38, 1.0 / 3.0, 0.0, -0.0, 7e-45], dtype=np.float32)
    program = tmp_path / "check.c"
    program.write_text(
        "#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\n"
        f"static const float v[] = {{{c_array_values(values)}}};\n"
        "int main(void) { for (unsigned i = 0; i < sizeof v / sizeof v[0]; ++i) { uint32_t b; memcpy(&b, &v[i], 4); printf(\"%08x\\n\", b); } return 0; }\n"
    )
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", str(program), "-o", str(tmp_path / "check")], check=True)
    printed = subprocess.run([str(tmp_path / "check")], capture_output=True, text=True, check=True).stdout.split()
    assert printed == [f"{bits:08x}" for bits in values.view(np.uint32)]


def test_integer_literals() -> None:
    assert c_array_values(np.array([-128, 127], np.int8)) == "-128, 127"
    assert c_array_values(np.array([-(2**31)], np.int32)) == "(-2147483647 - 1)"
    assert c_array_values(np.array([5], np.int64)) == "INT64_C(5)"


def test_long_names_keep_head_and_tail_and_collisions_are_numbered_not_hashed() -> None:
    """Exporters put what tells tensors apart at the end of long names; the identifier keeps it (issue 34)."""
    mangler = CNameMangler()
    first = mangler.mangle("/model/0/ql_replaced_integerize/bn2d_unsigned/Constant_1_output_0", "w")
    second = mangler.mangle("/model/0/ql_replaced_integerize/bn2d_unsigned/Constant_2_output_0", "w")
    assert first == "dc_w_model_0_ql_repla__d_unsigned_constant_1_output_0"
    assert second.endswith("constant_2_output_0")
    twins = [mangler.mangle(prefix + "_" + "x" * 60, "w") for prefix in ("a", "a")]  # the same name: one identifier
    assert twins[0] == twins[1]
    cousins = [mangler.mangle(prefix + "_" + "y" * 60, "w") for prefix in ("b", "b!")]  # shortened alike: numbered
    assert cousins[1] == cousins[0] + "_2"
    assert all(len(name) <= len("dc_w_") + 48 + 2 for name in (first, second, *cousins))
