"""Test plugin package misuse for deeploy_core's plugin host tests: one module per mistake."""
