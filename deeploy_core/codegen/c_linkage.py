"""The ``extern "C"`` guard of the generated headers.

The generated folder is a C library, but applications that link it are often
C++ (Arduino sketches, Zephyr or mbed firmware, host test programs).  A C++
translation unit that includes ``Network.h`` without C linkage would look for
mangled names (``_Z11InitNetworkv``) that the C objects never define, and the
link would fail with no hint at the cause; these lines make the headers usable
from both languages unchanged.
"""

from __future__ import annotations

C_LINKAGE_OPEN = ("", "#ifdef __cplusplus", 'extern "C" {', "#endif")
"""Opens C linkage for a C++ includer, after the header's own ``#include`` lines (a system header must not be
included inside an ``extern "C"`` block: some C++ libraries' versions declare overloads and templates)."""

C_LINKAGE_CLOSE = ("#ifdef __cplusplus", "}", "#endif")
"""Closes :data:`C_LINKAGE_OPEN`, before the include guard's ``#endif``."""
