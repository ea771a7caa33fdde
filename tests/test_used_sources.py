"""The runtime scan that decides which sources an output folder gets agrees with the C compiler.

The scan is lexical (:mod:`deeploy_core.codegen.used_sources`); a kernel
family defined by a macro is the case a plain search misses.  Every runtime
source the bundled platforms ship is compiled here and its exported symbols,
as ``nm`` lists them, must all be among the names the scan says it defines,
otherwise a network calling such a kernel would get a folder that does not link.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from deeploy_core.codegen.used_sources import defined_functions, header_closure, used_sources

generic_c = pytest.importorskip("deeploy_generic_c.platform", reason="the generic-c plugin is not installed")
pulp = pytest.importorskip("deeploy_pulp_cluster.platform", reason="the pulp-cluster plugin is not installed")

RUNTIMES = (generic_c.RUNTIME_DIR, pulp.RUNTIME_DIR)
SOURCES = sorted(source for root in RUNTIMES for source in (root / "src").glob("*.c"))


def _exported(source: Path, tmp_path: Path) -> set[str]:
    obj = tmp_path / f"{source.stem}.o"
    includes = [f"-I{root / 'include'}" for root in RUNTIMES]
    subprocess.run(["cc", "-std=c99", "-pthread", *includes, "-c", str(source), "-o", str(obj)], check=True)
    listing = subprocess.run(["nm", "-g", "--defined-only", str(obj)], capture_output=True, text=True, check=True)
    return {line.split()[-1] for line in listing.stdout.splitlines() if line.split()[-2] in "TDBRCG"}


@pytest.mark.skipif(shutil.which("nm") is None or shutil.which("cc") is None, reason="needs cc and nm")
@pytest.mark.parametrize("source", SOURCES, ids=[f"{path.parent.parent.parent.name}/{path.name}" for path in SOURCES])
def test_scan_finds_every_exported_symbol(source: Path, tmp_path: Path) -> None:
    exported = _exported(source, tmp_path)
    assert exported, f"{source.name} exports nothing?"
    assert exported <= defined_functions(source.read_text(encoding="utf-8")), \
        sorted(exported - defined_functions(source.read_text(encoding="utf-8")))


def test_macro_defined_kernels_and_helpers_are_followed(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text(
        '#include "k.h"\n#define DEF(name, expr) void k_##name(float *x) { x[0] = (expr); }\n'
        "DEF(twice, helper(x[0]) * 2.0f)\nstatic void k_hidden(void) {}\n", encoding="utf-8")
    (tmp_path / "b.c").write_text('#include "k.h"\nfloat helper(float v) { return v; }\n', encoding="utf-8")
    (tmp_path / "c.c").write_text("/* k_twice */ void unused(void) { }\n", encoding="utf-8")
    (tmp_path / "k.h").write_text('#include "k2.h"\n', encoding="utf-8")
    (tmp_path / "k2.h").write_text("float helper(float v);\n", encoding="utf-8")
    sources = [tmp_path / name for name in ("a.c", "b.c", "c.c")]
    assert used_sources(["void run(float *x) { k_twice(x); }"], sources) == (tmp_path / "a.c", tmp_path / "b.c")
    assert used_sources(["void run(void) { k_hidden(); }"], sources) == ()
    texts = {"a.c": (tmp_path / "a.c").read_text(encoding="utf-8")}
    assert sorted(header_closure(texts, {"a.c": tmp_path / "a.c"}, [])) == ["k.h", "k2.h"]
