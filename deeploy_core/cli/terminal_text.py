"""Model-derived text on the terminal: shown as it is, never interpreted.

Tables and messages are drawn with rich, which reads ``[bold]…[/]`` in a
plain string as markup.  Node and tensor names come from the model, so a name
such as ``[/x]`` would crash the command (rich refuses an unbalanced closing
tag) and ``[link=…]`` or an ANSI escape sequence inside a name could make the
terminal show something the model author chose.  Every such string goes
through :func:`terminal_text`: a :class:`rich.text.Text` is never parsed as
markup, and control characters are replaced by their Python escapes.
"""

from __future__ import annotations

from rich.text import Text

from deeploy_core.errors import printable_line


def terminal_text(value: object, style: str = "") -> Text:
    """``str(value)`` as rich text that is displayed literally: no markup, no control characters."""
    return Text(printable_line(str(value)), style=style)
