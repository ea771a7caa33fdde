"""An untiled compile imports only what it uses (issue 21 item 1).

OR-tools (and the pandas it pulls in) is needed only when a CP-SAT model is
solved: tiling or a CP allocator; ONNX Runtime only when a reference is run
(``validate``); the others belong to optional tools (test extras, later
features).  Importing them costs most of a small network's compile time, so
``deeploy-core compile`` of an untiled network must not.  Checked in a fresh
interpreter, with every installed plugin loaded as a user's would be.  A new
heavy optional dependency belongs in :data:`HEAVY`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from deeploy_core.testing.models import conformance_model

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")

HEAVY = ("ortools", "onnxruntime", "pandas", "scipy", "matplotlib", "torch", "jsonschema", "dask", "distributed",
         "copier", "sphinx", "pygments", "rich", "yaml")
"""Besides the heavy optional dependencies: pygments (Mako's error-page highlighting, never used), rich (only to
draw a spinner on a terminal) and yaml (only to read a memory-hierarchy file) — each was a visible part of start-up."""

PROBE = """
import json, sys
heavy = json.loads(sys.argv[2])
from deeploy_core.cli import main
sys.argv = ["deeploy-core", *json.loads(sys.argv[1])]
code = 0
try:
    main()
except SystemExit as stop:
    code = stop.code
print(json.dumps({"code": code, "heavy": sorted(name for name in heavy if name in sys.modules)}))
"""


def modules_after(arguments: list[str], environment: dict[str, str]) -> dict[str, object]:
    ran = subprocess.run([sys.executable, "-c", PROBE, json.dumps(arguments), json.dumps(HEAVY)], capture_output=True,
                         text=True, env=environment, timeout=120)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout.splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("plugins", ["generic-c", None], ids=["generic-c only", "every installed plugin"])
def test_untiled_compile_imports_no_heavy_dependency(plugins: str | None, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "cnn.onnx"
    onnx.save(conformance_model("cnn"), model)
    environment = {"PATH": "/usr/bin:/bin"}
    if plugins is not None:
        environment["DEEPLOY_CORE_PLUGINS"] = plugins
    outcome = modules_after(["compile", str(model), "-o", str(tmp_path / "out"), "--quiet"], environment)
    assert outcome == {"code": 0, "heavy": []}


def test_the_probe_sees_a_tiled_compile_import_the_solver(tmp_path: Path) -> None:
    """The check can fail: a tiled compile does solve a CP-SAT model."""
    model = tmp_path / "cnn.onnx"
    onnx.save(conformance_model("cnn"), model)
    outcome = modules_after(["compile", str(model), "-o", str(tmp_path / "out"), "--quiet", "--l1", "16000"],
                            {"PATH": "/usr/bin:/bin", "DEEPLOY_CORE_PLUGINS": "generic-c"})
    assert outcome["code"] == 0 and "ortools" in outcome["heavy"]  # type: ignore[operator]
    assert "pandas" not in outcome["heavy"]  # type: ignore[operator]  # cp_model's pandas is deferred


def test_cp_model_gets_real_pandas_when_its_series_helpers_are_used() -> None:
    """Deferring pandas loses nothing: cp_model's pandas-based helpers still work, in a fresh interpreter."""
    probe = ("import sys\n"
             "from deeploy_core.solvers.cp_sat import cp_model_module\n"
             "cp_model = cp_model_module()\n"
             "before = 'pandas' in sys.modules\n"
             "import pandas as pd\n"
             "model = cp_model.CpModel()\n"
             "series = model.new_int_var_series('x', pd.Index(range(3)), 0, 5)\n"
             "model.add(sum(series) == 7)\n"
             "solver = cp_model.CpSolver()\n"
             "assert solver.solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)\n"
             "print(before, int(solver.values(series).sum()))\n")
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["False", "7"]
