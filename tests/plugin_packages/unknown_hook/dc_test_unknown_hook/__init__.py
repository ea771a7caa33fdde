"""Test plugin package unknown_hook for deeploy_core's plugin host tests."""
