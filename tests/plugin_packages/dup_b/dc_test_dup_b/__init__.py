"""Test plugin package dup_b for deeploy_core's plugin host tests."""
