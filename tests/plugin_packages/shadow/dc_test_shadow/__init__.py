"""Test plugin package shadow for deeploy_core's plugin host tests."""
