"""Node templates: Mako text that becomes a layer's C code.

A template also declares the scratch (transient) buffers its kernel needs, as
a function of the operator representation, so the mid end can give them a
place in the arena instead of the kernel allocating at run time.
"""

from __future__ import annotations

from typing import Any, Callable

from mako.template import Template

TransientSizer = Callable[[dict[str, Any]], dict[str, int]]


class NodeTemplate:
    """One kernel call (or inline code) with its headers and scratch requirements."""

    def __init__(
        self,
        code: str,
        headers: tuple[str, ...] = (),
        transients: TransientSizer | None = None,
    ) -> None:
        self.source = code
        self.headers = headers
        self._transients = transients
        self._template = Template(code, strict_undefined=True)

    def transient_buffers(self, representation: dict[str, Any]) -> dict[str, int]:
        """Scratch buffers as ``{representation key: bytes}``; the key receives the buffer's C name."""
        if self._transients is None:
            return {}
        return {key: size for key, size in self._transients(representation).items() if size > 0}

    def render(self, representation: dict[str, Any]) -> str:
        """The C code for one layer."""
        return str(self._template.render(**representation)).strip()
