"""Calibration data for ONNX Runtime's static quantizer: seeded standard-normal float inputs.

``quantize_static`` needs a :class:`CalibrationDataReader`; the QDQ tests (``test_qdq``) and the float-bias tests
(``test_float_bias``, whose network the cluster's tests reuse) calibrate with the same one, which lives here so that
no test module imports another.
"""

from __future__ import annotations

import numpy as np
from onnxruntime.quantization import CalibrationDataReader


class RandomCalibration(CalibrationDataReader):
    """``count`` batches of standard-normal float32 inputs (seed 0), one array per ``(name, type, shape)`` spec."""

    def __init__(self, specs: list, count: int = 8) -> None:
        rng = np.random.default_rng(0)
        self.batches = iter(
            [{name: rng.standard_normal(shape).astype(np.float32) for name, _, shape in specs} for _ in range(count)]
        )

    def get_next(self) -> dict | None:
        return next(self.batches, None)
