"""Build a ``compile`` output folder the way its user does, for the option-effect tests of compile's C API and
self-test options (``tests/test_cli_option_effects.py``).

What those options change shows only once the folder is built: the verdict of
``make test`` (the sample data and tolerances it was compiled with) and the
sections of the object files (``--weights-section``, ``--arena-section``).
``make`` runs in the folder ``compile`` wrote, with ``PATH`` as its whole
environment, so nothing of the test's environment reaches the build.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from deeploy_core.testing.cli_outcomes import CliOutcome


def output_folder(outcome: CliOutcome) -> Path:
    """The folder a successful ``compile`` run wrote (its ``-o``)."""
    assert outcome.ok and "-o" in outcome.args, outcome.describe()
    return Path(outcome.args[outcome.args.index("-o") + 1])


def make(outcome: CliOutcome, *targets: str, cflags: str) -> subprocess.CompletedProcess[str]:
    """``make -C FOLDER CFLAGS=cflags TARGETS`` in the output folder of ``outcome``."""
    return subprocess.run(["make", "-C", str(output_folder(outcome)), f"CFLAGS={cflags}", *targets],
                          capture_output=True, text=True, env={"PATH": os.environ["PATH"]}, timeout=600)


def self_test_passes(outcome: CliOutcome, cflags: str) -> bool:
    """Whether ``make test`` passes; False only for the self-test's own MISMATCH verdict (any other failure,
    a build error or a missing self-test, fails the calling test)."""
    done = make(outcome, "test", cflags=cflags)
    printed = done.stdout + done.stderr
    if done.returncode == 0:
        assert "self-test passed" in printed, printed
        return True
    assert "MISMATCH" in printed and "self-test FAILED" in printed, printed
    return False


def object_sections(outcome: CliOutcome, obj: str, cflags: str) -> dict[str, int]:
    """Section name → size in bytes of object ``obj`` (e.g. ``build/Network.o``) after ``make`` builds the
    folder's library, read with GNU ``size -A``."""
    built = make(outcome, cflags=cflags)
    assert built.returncode == 0, built.stdout + built.stderr
    listing = subprocess.run(["size", "-A", "-d", str(output_folder(outcome) / obj)], capture_output=True, text=True,
                             check=True)
    return {fields[0]: int(fields[1]) for line in listing.stdout.splitlines()
            if len(fields := line.split()) == 3 and fields[1].isdigit()}
