"""``supported-ops`` states, per op, its types, constraints, platforms, tiling and how its arithmetic is verified.

Issue 19 asks that both platforms list every op name of Deeploy's Generic
platform and the seven ops of Deeploy's other targets that the issue names,
and that every listed op says what its results were checked against.
"""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from deeploy_core.platform.verification import VERIFICATION_STATUSES
from deeploy_core.testing.cli_outcomes import CliLab
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
pytest.importorskip("deeploy_pulp_cluster", reason="the cluster platform (plugins/pulp_cluster) is not installed")

PLATFORMS = ("generic-c", "pulp-cluster")
PLUGINS = ",".join(PLATFORMS)

DEEPLOY_GENERIC_OPS = (
    "Add Sub Conv Concat DebugPrint Div Flatten Gather Gemm iGELU Gelu LayerNormalization iLayerNorm IntegerDiv "
    "IntegerMean Softmax iSoftmax ITAMax ITAPartialMax MatMul MatMulInteger MaxPool Mul Pow Sqrt Pad ReduceMean "
    "ReduceSum Relu RequantizediGELU RequantShift Reshape RQIntegerDiv Squeeze Transpose Unsqueeze Slice Quant "
    "Dequant BatchNormalization ConvTranspose Ceil Floor Clip Exp Sigmoid Swish HardSigmoid HardSwish "
    "InstanceNormalization GroupNormalization AveragePool GlobalAveragePool GlobalMaxPool"
).split()
"""The keys of ``GenericMapping`` in Deeploy's ``Deeploy/Targets/Generic/Platform.py`` (pulp-platform/Deeploy),
the op names Deeploy's Generic platform maps: 54 of them."""

OTHER_TARGET_OPS = "iRMSNorm iHardswish RequantizediHardswish iNoNorm RequantizedAdd RQGemm RQMatMul".split()
"""The ops of Deeploy's other targets that issue 19 names (small language models, MobileNetV3-style networks)."""


def listing(platform: str, tmp_path: Path) -> list[dict]:
    outcome = CliLab(tmp_path, {"DEEPLOY_CORE_PLUGINS": PLUGINS}).invoke(["supported-ops", "--platform", platform,
                                                                          "--json"])
    assert outcome.ok, outcome.describe()
    return json.loads(outcome.stdout)


def test_the_expected_names_are_deeploys() -> None:
    assert len(DEEPLOY_GENERIC_OPS) == len(set(DEEPLOY_GENERIC_OPS)) == 54
    assert len(OTHER_TARGET_OPS) == 7 and not set(OTHER_TARGET_OPS) & set(DEEPLOY_GENERIC_OPS)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_deeploy_op_is_listed(platform: str, tmp_path: Path) -> None:
    listed = {row["op"] for row in listing(platform, tmp_path)}
    missing = [op for op in (*DEEPLOY_GENERIC_OPS, *OTHER_TARGET_OPS) if op not in listed]
    assert not missing, f"supported-ops --platform {platform} does not list {missing}"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_listed_op_states_types_platforms_tiling_and_verification(platform: str, tmp_path: Path) -> None:
    """A mapped op without a verification entry fails here: whoever adds an op states how it is checked."""
    rows = listing(platform, tmp_path)
    unstated = sorted({row["op"] for row in rows if not row["verification"]})
    assert not unstated, f"no verification entry in deeploy_generic_c/verification.py for {unstated}"
    for row in rows:
        assert platform in row["platforms"] and row["platforms"] == sorted(row["platforms"]), row
        assert row["signature"] == f"{', '.join(row['input_types'])} -> {', '.join(row['output_types'])}" \
            or row["signature"].endswith(", …"), row
        assert row["tiling"]["constraint"] and row["tiling"]["description"], row
        assert {check["status"] for check in row["verification"]} <= set(VERIFICATION_STATUSES), row
        assert all(check["evidence"] for check in row["verification"]), row


def test_statuses_and_tiling_say_what_the_tests_check(tmp_path: Path) -> None:
    rows = {row["kernel"]: row for row in listing("pulp-cluster", tmp_path)}
    statuses = {kernel: [check["status"] for check in row["verification"]] for kernel, row in rows.items()}
    assert statuses["Conv integer"] == ["peer", "onnx-node-tests"]
    assert statuses["RequantShift integer"] == ["peer"]
    assert statuses["IntegerDiv integer"] == ["reference"]
    assert "unverified" in rows["IntegerDiv integer"]["verification"][0]["evidence"]
    assert statuses["IntegerMean integer"] == ["reference"]
    assert "Deeploy verified" in rows["IntegerMean integer"]["verification"][0]["evidence"]
    assert [row["verification"][0]["status"] for row in rows.values() if row["op"] == "DebugPrint"] \
        == ["documented no-op"] * sum(row["op"] == "DebugPrint" for row in rows.values())
    tiling = {row["op"]: row["tiling"]["constraint"] for row in rows.values()}
    assert (tiling["Conv"], tiling["Gemm"], tiling["iSoftmax"], tiling["Softmax"], tiling["Split"]) == \
        ("sliding-window", "matrix-product", "last-axis-rows", "along-axes", "untiled")  # Split: several outputs run as one tile


def test_the_text_table_shows_platforms_tiling_and_verification(tmp_path: Path) -> None:
    outcome = CliLab(tmp_path, {"DEEPLOY_CORE_PLUGINS": PLUGINS, "COLUMNS": "80"}).invoke(["supported-ops"])
    assert outcome.ok, outcome.describe()
    [line] = [line for line in outcome.stdout.splitlines() if line.split()[:1] == ["RequantShift"]]
    assert " channel-parameters " in line and " peer" in line
    assert [line.split()[0] for line in outcome.stdout.splitlines()].count("GRU") == 1, "issue 33 point 5"


PEERS = peer_tests_root(Path(__file__).parent)


@pytest.mark.skipif(PEERS is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
def test_ops_of_the_peer_networks_claim_peer_verification() -> None:
    """The table is data, not read from ../shared at run time; this keeps it true to the peer networks we have."""
    from deeploy_generic_c.verification import VERIFICATION

    assert PEERS is not None
    occurring: set[str] = set()
    for peer in find_peer_tests(PEERS):
        model = onnx.load(str(peer.model), load_external_data=False)
        occurring |= {node.op_type for node in model.graph.node}  # com.microsoft::Gelu counts as Gelu, as in Deeploy
    claimed = {op for op, checks in VERIFICATION.items() if any(check.status == "peer" for check in checks)}
    wrong = sorted(op for op in claimed - occurring if not op.startswith("Requantized"))
    missing = sorted(op for op in occurring & set(VERIFICATION) if op not in claimed)
    assert not wrong, f"claimed peer-verified but in no peer network: {wrong}"
    assert not missing, f"in a peer network but not claimed peer-verified: {missing}"
