"""Exceptions that reach the user.

Every error a user can cause (a bad model, a wrong option, a broken plugin) is a
:class:`DeeployError`.  The CLI prints such errors as one line and exits with
code 2; anything else is a bug in deeploy_core and keeps its traceback.
"""

from __future__ import annotations


class DeeployError(Exception):
    """An error caused by the user's input, options or installed plugins.

    The message is one line; ``details`` holds further lines (one per
    unsupported node, a compiler's output) that the CLI prints beneath it.
    """

    exit_code: int = 2

    def __init__(self, message: str, details: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.details = details


def printable_line(text: str) -> str:
    """``text`` as exactly one printable line: newlines, ESC, bidi overrides and other non-printables become escapes.

    Model-derived names reach error messages; escaping them here means a name
    holding a newline can never forge a second line of output.
    """
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


class ExtensionNotFoundError(DeeployError, LookupError):
    """An extension was selected by a name that no loaded plugin registered."""


class PluginError(DeeployError):
    """A plugin failed while the host was calling into it.

    The message always starts with the plugin's name and distribution so that
    the user knows whom to blame (or which plugin to disable).
    """

    def __init__(self, plugin: str, distribution: str, what: str, cause: BaseException) -> None:
        self.plugin = plugin
        self.distribution = distribution
        self.cause = cause
        super().__init__(f"plugin {plugin!r} ({distribution}) failed {what}: {type(cause).__name__}: {cause}")
