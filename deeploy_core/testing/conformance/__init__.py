"""Conformance suites, one per extension kind: subclass them in a plugin's tests."""
