"""Test plugin package good for deeploy_core's plugin host tests."""
