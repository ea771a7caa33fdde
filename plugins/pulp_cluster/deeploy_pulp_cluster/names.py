"""The names the cluster plugin registers its extensions under (``--platform pulp-cluster``, its memory level).

They live apart from ``plugin.py`` because both the registration
(``plugin.py``) and the platform data (``platform.py``) carry the platform's
name, and the registration builds the platform data: with the names in either
of the two, they would import each other.
"""

from __future__ import annotations

PLATFORM_NAME = "pulp-cluster"
MEMORY_LEVEL_NAME = "pulp-l3-l2-l1"
