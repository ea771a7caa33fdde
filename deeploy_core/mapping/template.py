"""Node templates: Mako text that becomes a layer's C code.

A template also declares the scratch (transient) buffers its kernel needs, as
a function of the operator representation, so the mid end can give them a
place in the arena instead of the kernel allocating at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from mako.template import Template

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
            from deeploy_core.mapping.mako_import import compiled_template

            self._template = compiled_template(self.source)
        return str(self._template.render(**representation)).strip()
