"""Generic delegation for deployer wrappers (memory-level, tiler, …).

A wrapper adds behaviour around a deployer without knowing its class.  Reads of
attributes the wrapper does not define fall through to the wrapped deployer;
writes go to the platform deployer at the bottom unless the wrapper declares the
attribute as its own in ``own_attributes``.  So all network state lives in one
place, and no wrapper needs a hand-written list of attributes to re-export.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from deeploy_core.deployer.base import Deployer
from deeploy_core.deployer.stages import StageDriver

WrapperT = TypeVar("WrapperT")


class DeployerWrapper(StageDriver):
    """Wraps a :class:`Deployer` (or another wrapper) and delegates to it.

    Subclasses override stages and call ``self.inner.<stage>()`` for the
    wrapped behaviour; ``deploy`` runs every stage on the outermost wrapper.
    """

    own_attributes: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, inner: Deployer | DeployerWrapper) -> None:
        if not isinstance(inner, Deployer):
            raise TypeError(f"{type(self).__name__} must wrap a Deployer, got {type(inner).__name__}")
        object.__setattr__(self, "_inner", inner)

    @property
    def inner(self) -> Deployer:
        """The deployer or wrapper directly inside this one."""
        return object.__getattribute__(self, "_inner")

    def __getattr__(self, name: str) -> Any:
        if name == "_inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if self._is_own_attribute(name):
            object.__setattr__(self, name, value)
        else:
            setattr(self.unwrap(), name, value)

    def __delattr__(self, name: str) -> None:
        if self._is_own_attribute(name):
            object.__delattr__(self, name)
        else:
            delattr(self.unwrap(), name)

    @classmethod
    def _is_own_attribute(cls, name: str) -> bool:
        return any(name in getattr(klass, "own_attributes", ()) for klass in cls.__mro__) or isinstance(
            getattr(cls, name, None), property
        )

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
