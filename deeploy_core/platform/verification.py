"""How far an operator's arithmetic has been checked, as a platform states it for ``supported-ops``.

A compiler that claims an op should also say whether its results were ever
compared with anything, and with what: a user porting a Deeploy network needs
to know that ``RequantShift`` matched Deeploy's own outputs bit for bit while
``IntegerDiv`` follows a written formula nobody could test against a peer.
That knowledge belongs to whoever wrote the kernels, so a platform publishes
it as data (:attr:`deeploy_core.platform.Platform.verification`) instead of
the listing guessing it at run time from test files that may not be installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

VerificationStatus = Literal["peer", "onnx-node-tests", "onnxruntime", "litert", "reference", "documented no-op"]
"""What the op's results were compared with:

``peer``
    bit-exact (integers) or within 1e-4 (float32) against the outputs of Deeploy's own test networks;
``onnx-node-tests``
    ONNX's backend node test cases of the op compile, run and match on the platform;
``onnxruntime``
    test networks match ONNX Runtime (bit-exact for quantised ones);
``litert``
    int8 TFLite models converted by tf2onnx match LiteRT's reference kernels (``BUILTIN_REF``) bit for bit;
``reference``
    only a numpy reference written from the op's written semantics (no peer data: the evidence says whether
    Deeploy itself verified the arithmetic or left it unverified);
``documented no-op``
    the op computes nothing by design (a copy), as its documentation says.
"""

VERIFICATION_STATUSES: tuple[str, ...] = get_args(VerificationStatus)


@dataclass(frozen=True)
class OpVerification:
    """One kind of check an op's kernels pass, and the evidence (which tests, against what)."""

    status: VerificationStatus
    evidence: str

    def __post_init__(self) -> None:
        if self.status not in VERIFICATION_STATUSES:
            raise ValueError(f"unknown verification status {self.status!r}; one of {', '.join(VERIFICATION_STATUSES)}")

    def as_json(self) -> dict[str, str]:
        """The ``supported-ops --json`` form: ``{"status": ..., "evidence": ...}``."""
        return {"status": self.status, "evidence": self.evidence}
