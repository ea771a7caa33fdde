"""Helpers that several test modules share, so that no test module imports another (issue 34)."""
