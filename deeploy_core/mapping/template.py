"""Node templates: Mako text that becomes a layer's C code.

A template also declares the scratch (transient) buffers its kernel needs, as
a function of the operator representation, so the mid end can give them a
place in the arena instead of the kernel allocating at run time.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from mako.template import Template

PYGMENTS_PLUGIN = "mako.ext.pygmentplugin"

TransientSizer = Callable[[dict[str, Any]], dict[str, int]]


class NodeTemplate:
    """One kernel call (or inline code) with its headers and scratch requirements.

    The Mako text is compiled on the first render, not when the operator module is imported: a platform declares
    hundreds of templates and a network renders a handful, and compiling them all made up a good part of every
    command's start-up (issue 21: compile at the ``onnx.load`` floor).
    """

    def __init__(
        self,
        code: str,
        headers: tuple[str, ...] = (),
        transients: TransientSizer | None = None,
    ) -> None:
        self.source = code
        self.headers = headers
        self._transients = transients
        self._template: Template | None = None

    def transient_buffers(self, representation: dict[str, Any]) -> dict[str, int]:
        """Scratch buffers as ``{representation key: bytes}``; the key receives the buffer's C name."""
        if self._transients is None:
            return {}
        return {key: size for key, size in self._transients(representation).items() if size > 0}

    def render(self, representation: dict[str, Any]) -> str:
        """The C code for one layer."""
        if self._template is None:
            self._template = _mako_template_class()(self.source, strict_undefined=True)
        return str(self._template.render(**representation)).strip()


def _mako_template_class() -> type[Template]:
    """``mako.template.Template``, imported without Mako's pygments highlighting.

    ``mako.exceptions`` (imported by ``mako.template``) loads pygments, when it
    is installed, to colour the source excerpts of its HTML error pages.  We
    never render those pages — a template error reaches the user as one line
    naming the node — yet pygments' lexers were the largest single import of a
    ``compile`` run.  Marking Mako's pygments plugin as absent while Mako is
    first imported makes Mako take its own fallback (plain escaped text); the
    mark is removed right after, so anyone importing the plugin later still
    gets it.  If Mako is already imported, nothing changes.
    """
    blocked = "mako.exceptions" not in sys.modules and PYGMENTS_PLUGIN not in sys.modules
    if blocked:
        sys.modules[PYGMENTS_PLUGIN] = None  # type: ignore[assignment]
    try:
        from mako.template import Template
    finally:
        if blocked:
            del sys.modules[PYGMENTS_PLUGIN]
    return Template
