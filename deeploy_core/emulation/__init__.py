"""Running a cross-built program on an emulated core to measure it: instruction counts and estimated cycles.

QEMU runs a board's program but does not count what it executes; this
package runs the same ELF under the Unicorn engine and counts every executed
instruction, per layer and per function, with a documented cycle estimate.
``validate`` uses it for board platforms and ``bench/cortex_m.py`` for its
table, so it sits below both (the test harness, :mod:`deeploy_core.testing`,
imports it too).
"""
