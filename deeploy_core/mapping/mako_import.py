"""Mako, imported without its pygments highlighting.

``mako.exceptions`` (imported by ``mako.template``) loads pygments, when it is
installed, to colour the source excerpts of its HTML error pages.  We never
render those pages — a template error reaches the user as one line naming the
node — yet pygments' lexers were the largest single import of a ``compile``
run.  Marking Mako's pygments plugin as absent before Mako is first imported
makes Mako take its own fallback (plain escaped text); the mark is removed
right after, so anyone importing the plugin later still gets it.  If Mako is
already imported (by the user's code in the same process) nothing changes.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mako.template import Template

PYGMENTS_PLUGIN = "mako.ext.pygmentplugin"


def compiled_template(source: str) -> Template:
    """``source`` compiled as a Mako template with undefined names as errors."""
    blocked = "mako.exceptions" not in sys.modules and PYGMENTS_PLUGIN not in sys.modules
    if blocked:
        sys.modules[PYGMENTS_PLUGIN] = None  # type: ignore[assignment]
    try:
        from mako.template import Template
    finally:
        if blocked:
            del sys.modules[PYGMENTS_PLUGIN]

    return Template(source, strict_undefined=True)
