"""Test plugin package raising_hook for deeploy_core's plugin host tests."""
