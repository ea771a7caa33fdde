"""Test plugin package bad_hookimpl for deeploy_core's plugin host tests."""
