"""A network ONNX Runtime cannot run, given --inputs without --outputs (issue 33 point 2).

Deeploy's integer networks hold ``RequantShift`` and other dialect ops in the
default domain; ONNX Runtime refuses to load them with an ``INVALID_GRAPH``
dump.  ``validate`` must say in one line that ONNX Runtime cannot run the
network and to pass ``--outputs``; ``compile`` must still write the folder,
without a self-test, and say why.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from deeploy_core.testing.peer_tests import peer_tests_root
from deeploy_core.testing.terminal import run_piped
from deeploy_core.validate.reference import ops_onnx_runtime_lacks

PEERS = peer_tests_root()
PEER = None if PEERS is None else PEERS / "Kernels" / "Integer" / "Conv" / "Regular_2D_RQ"
pytestmark = pytest.mark.skipif(PEER is None, reason="Deeploy's peer tests (../shared/peer-tests/deeploy) are absent")
EXPECTED = ("ONNX Runtime cannot run this network: it has no kernel for RequantShift (ops outside ONNX, such as "
            "Deeploy's integer dialect); give the expected outputs with --outputs golden.npz")


def test_validate_says_onnx_runtime_cannot_run_it_and_what_to_pass() -> None:
    assert PEER is not None
    done = run_piped("validate", str(PEER / "network.onnx"), "--inputs", str(PEER / "inputs.npz"),
                     plugins="generic-c")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == f"error: {EXPECTED}", done.stderr
    assert "INVALID_GRAPH" not in done.stderr and "Traceback" not in done.stderr


def test_compile_writes_the_folder_without_a_self_test_and_says_why(tmp_path: Path) -> None:
    assert PEER is not None
    done = run_piped("compile", str(PEER / "network.onnx"), "--inputs", str(PEER / "inputs.npz"),
                     "-o", str(tmp_path / "out"), plugins="generic-c")
    assert done.returncode == 0, done.stderr
    assert f"warning: no self-test written: {EXPECTED}" in done.stderr.splitlines()
    assert (tmp_path / "out" / "Network.c").is_file() and not (tmp_path / "out" / "selftest").exists()
    assert "make test" not in (tmp_path / "out" / "README.md").read_text()
    with_goldens = run_piped("compile", str(PEER / "network.onnx"), "--inputs", str(PEER / "inputs.npz"),
                             "--outputs", str(PEER / "outputs.npz"), "-o", str(tmp_path / "golden"),
                             plugins="generic-c")
    assert with_goldens.returncode == 0 and (tmp_path / "golden" / "selftest").is_dir(), with_goldens.stderr


def test_only_ops_outside_the_domains_onnx_runtime_implements_are_named() -> None:
    assert PEER is not None
    assert ops_onnx_runtime_lacks(onnx.load(PEER / "network.onnx")) == ["RequantShift"]
    node = onnx.helper.make_node("QLinearAdd", ["a"], ["b"], domain="com.microsoft")
    custom = onnx.helper.make_node("Quant", ["b"], ["c"], domain="qonnx.custom_op.general")
    graph = onnx.helper.make_graph([node, custom, onnx.helper.make_node("Relu", ["c"], ["d"])], "g", [], [])
    assert ops_onnx_runtime_lacks(onnx.helper.make_model(graph)) == ["qonnx.custom_op.general.Quant"]
