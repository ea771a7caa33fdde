"""Test plugin package slow_import for deeploy_core's plugin host tests."""
