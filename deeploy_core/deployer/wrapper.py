"""Deployer wrappers (memory-level, tiler, …): behaviour added around a deployer without knowing its class.

A wrapper overrides the stages it cares about and calls ``self.inner.<stage>()``
for the wrapped behaviour.  It holds no network state: everything a compile
produces lives in the one :class:`~deeploy_core.compilation.Compilation` the
platform deployer created, which every wrapper reaches through
:attr:`DeployerWrapper.compilation`; what an extension computes for the others
goes into ``compilation.results``, keyed by type.  A wrapper's own attributes
are its configuration (a tiler's buffering scheme, its allocator) and stay on
the wrapper.  There is no attribute delegation: reading or writing a name the
wrapper does not define is an ordinary ``AttributeError``, so a typo never
lands silently on another object.
"""

from __future__ import annotations

from typing import Any, TypeVar

from deeploy_core.compilation import Compilation
from deeploy_core.deployer.base import Deployer
from deeploy_core.deployer.stages import StageDriver

WrapperT = TypeVar("WrapperT")


class DeployerWrapper(StageDriver):
    """Wraps a :class:`Deployer` (or another wrapper) and shares its compilation.

    Subclasses override stages and call ``self.inner.<stage>()`` for the
    wrapped behaviour; ``deploy`` runs every stage on the outermost wrapper.
    """

    def __init__(self, inner: Deployer | DeployerWrapper) -> None:
        if not isinstance(inner, Deployer):
            raise TypeError(f"{type(self).__name__} must wrap a Deployer, got {type(inner).__name__}")
        self._inner = inner

    @property
    def inner(self) -> Deployer:
        """The deployer or wrapper directly inside this one."""
        return self._inner

    @property
    def compilation(self) -> Compilation:
        """The compilation of the platform deployer at the bottom of the chain, shared by every wrapper."""
        return self.inner.compilation

    def frontend(self) -> None:
        """Unchanged: the wrapped deployer's ``frontend``."""
        self.inner.frontend()

    def lower(self) -> None:
        """Unchanged: the wrapped deployer's ``lower``."""
        self.inner.lower()

    def parse(self) -> None:
        """Unchanged: the wrapped deployer's ``parse``."""
        self.inner.parse()

    def bind(self) -> None:
        """Unchanged: the wrapped deployer's ``bind``."""
        self.inner.bind()

    def generate(self) -> Any:
        """Unchanged: the wrapped deployer's ``generate``."""
        return self.inner.generate()

    def unwrap(self) -> Deployer:
        """The platform deployer at the bottom of the chain."""
        return self.inner.unwrap()

    def wrapper_chain(self) -> tuple[Any, ...]:
        """Outermost first: this wrapper, the wrappers inside it, then the deployer."""
        return (self, *self.inner.wrapper_chain())

    def find_wrapper(self, wrapper_type: type[WrapperT]) -> WrapperT | None:
        """The outermost wrapper of ``wrapper_type`` in the chain, if any."""
        for layer in self.wrapper_chain():
            if isinstance(layer, wrapper_type):
                return layer
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


Deployer.register(DeployerWrapper)
