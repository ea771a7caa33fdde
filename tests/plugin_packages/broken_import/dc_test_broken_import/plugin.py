"""Fails at import time, as a plugin with a missing dependency would."""

import dc_test_this_dependency_is_not_installed  # noqa: F401
