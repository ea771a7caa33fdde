"""Test plugin: code transformations that leave a visible, runnable trace in every layer."""
