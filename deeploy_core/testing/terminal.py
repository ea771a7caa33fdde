"""Run ``deeploy-core`` the ways a user sees it: piped, or on a terminal of a chosen width.

The tables and the progress line behave differently on a terminal than in a
pipe, so the tests run the real command in a child process, once with its
output captured through pipes and once with a pseudo-terminal whose window
size is set (``TIOCSWINSZ``) as a terminal emulator would.  POSIX only
(:mod:`pty`), like the rest of the test suite.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from dataclasses import dataclass

ANSI_ESCAPE = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z])")


@dataclass
class Finished:
    """Exit code and what the command printed (terminal output without colours and carriage returns)."""

    returncode: int
    stdout: str
    stderr: str


def cli_environment(plugins: str, columns: int | None = None) -> dict[str, str]:
    """The environment of a child ``deeploy-core`` loading ``plugins`` (``DEEPLOY_CORE_PLUGINS``), without the
    caller's terminal hints (a developer's ``COLUMNS`` or ``FORCE_COLOR`` would change what is tested)."""
    environ = {key: value for key, value in os.environ.items()
               if key not in ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    environ["DEEPLOY_CORE_PLUGINS"] = plugins
    if columns is not None:
        environ["COLUMNS"] = str(columns)
    return environ


def run_piped(*args: str, plugins: str, columns: int = 80) -> Finished:
    """The command with stdout and stderr captured through pipes, ``COLUMNS`` set as a shell would."""
    done = subprocess.run([sys.executable, "-m", "deeploy_core", *args], capture_output=True, text=True,
                          env=cli_environment(plugins, columns), timeout=600)
    return Finished(done.returncode, done.stdout, done.stderr)


def terminal_text(raw: bytes) -> str:
    """What a terminal's scrollback would hold as text: colours and cursor movements dropped, CRLF → LF."""
    return ANSI_ESCAPE.sub("", raw.decode("utf-8", errors="replace")).replace("\r\n", "\n").replace("\r", "\n")


def run_on_terminal(*args: str, plugins: str, columns: int = 80, stderr_on_terminal: bool = False) -> Finished:
    """The command with stdout (and optionally stderr) on a pseudo-terminal ``columns`` wide.

    With ``stderr_on_terminal`` both streams arrive mixed in ``stdout``, as on
    a screen; otherwise stderr is captured apart through a pipe.

    The window size is set on the terminal itself, not through ``COLUMNS``,
    so the command learns it the way it does in a real terminal.
    """
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    environ = {**cli_environment(plugins), "TERM": "xterm-256color"}
    child = subprocess.Popen([sys.executable, "-m", "deeploy_core", *args], stdin=follower, stdout=follower,
                             stderr=follower if stderr_on_terminal else subprocess.PIPE, env=environ)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # Linux reports the closed other end as EIO
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    stderr = b"" if child.stderr is None else child.stderr.read()
    returncode = child.wait(timeout=600)
    if child.stderr is not None:
        child.stderr.close()
    return Finished(returncode, terminal_text(b"".join(chunks)), stderr.decode("utf-8", errors="replace"))
