"""Test plugin package broken_import for deeploy_core's plugin host tests."""
