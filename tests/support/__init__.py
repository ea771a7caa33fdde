"""Helpers that several test modules (and some benchmarks in ``bench/``) share (issue 34).

Here so that no test module imports another, and so that the installed :mod:`deeploy_core.testing` holds only what
plugin authors use: one concept per module, named by what it holds.
"""
