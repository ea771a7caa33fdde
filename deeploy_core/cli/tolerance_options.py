"""The help of ``--atol``/``--rtol``, shared by ``validate`` and ``compile`` (whose self-test judges alike).

Both default to unset: unset, float outputs are judged by scale and cosine
(:mod:`deeploy_core.tolerance`); set, they replace that rule, so the
help has to say what leaving them out means.
"""

from __future__ import annotations

from deeploy_core.tolerance import MIN_COSINE, SCALE_TOLERANCE

ATOL_HELP = (f"Judge outputs element-wise by |result - reference| <= ATOL + RTOL x |reference| instead of the "
             f"default rule (float outputs: max error <= {SCALE_TOLERANCE:g} x max |reference| and cosine "
             f">= {MIN_COSINE:g}, a reference of zeros failing as too small to judge; integers exactly).")
RTOL_HELP = "Relative part of the element-wise rule (given alone, ATOL is 0)."
