"""``bench/exporter_table.py`` prints one row per model, exporter and precision, with each platform's result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "exporter_table.py"


@pytest.mark.models
def test_table_has_a_validated_row_for_the_gru_on_both_exporters() -> None:
    result = subprocess.run([sys.executable, str(BENCH), "--filter", "gru-", "--skip-heavy"], capture_output=True,
                            text=True, check=False, timeout=600)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["model", "exporter", "precision", "generic-c", "pulp-cluster", "max", "error",
                                "(generic-c", "/", "pulp-cluster)"]
    rows = [line.split() for line in lines[2:] if line.strip()]
    assert [row[:5] for row in rows] == [["gru", "legacy", "float32", "ok", "-"], ["gru", "dynamo", "float32", "ok", "-"]]
    assert all(float(row[5]) <= 1e-4 for row in rows), rows
    assert "failures:" not in result.stdout
