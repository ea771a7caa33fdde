"""The name the generic C platform is registered and selected under (``--platform generic-c``).

It lives apart from ``plugin.py`` because both the registration (``plugin.py``)
and the platform data (``platform.py``) carry it, and the registration builds
the platform data: with the name in either of the two, they would import each
other.
"""

from __future__ import annotations

PLATFORM_NAME = "generic-c"
