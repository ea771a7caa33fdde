"""Test plugin package dup_a for deeploy_core's plugin host tests."""
