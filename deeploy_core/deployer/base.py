"""The base class of platform deployers."""

from __future__ import annotations

import abc
from typing import Any

from deeploy_core.compilation import Compilation, CompileSettings
from deeploy_core.deployer.stages import StageDriver


class Deployer(StageDriver, abc.ABC):
    """A platform's deployer: owns the compilation, the platform data and every stage.

    Platform plugins subclass it and implement the stages.  Memory-level and
    tiler behaviour is added around it by :class:`DeployerWrapper` subclasses,
    never by subclassing the platform deployer, so that any platform composes
    with any memory-level policy and tiler.  The deployer creates the one
    :class:`~deeploy_core.compilation.Compilation` that every wrapper around it
    shares, holding the core's :class:`~deeploy_core.compilation.CompileSettings`
    it is given (the defaults when None): the platform's factory receives them
    as one object and passes them on.
    """

    platform_name: str = ""

    def __init__(self, settings: CompileSettings | None = None) -> None:
        self._compilation = Compilation(platform_name=self.platform_name,
                                        settings=settings if settings is not None else CompileSettings())

    @property
    def compilation(self) -> Compilation:
        """The state of this deployer's compile (created with the deployer)."""
        return self._compilation

    @abc.abstractmethod
    def frontend(self) -> None:
        """Import and check the model (onnx checker, inliner, opset, shapes)."""

    @abc.abstractmethod
    def lower(self) -> None:
        """Rewrite the graph into operators the platform supports."""

    @abc.abstractmethod
    def parse(self) -> None:
        """Map every node to an op mapping and build the network context."""

    @abc.abstractmethod
    def bind(self) -> None:
        """Choose bindings (types, templates) and plan buffers."""

    @abc.abstractmethod
    def generate(self) -> Any:
        """Emit the code and return what was generated."""

    def unwrap(self) -> Deployer:
        """The platform deployer itself (a wrapper returns the one it wraps, recursively)."""
        return self

    def wrapper_chain(self) -> tuple[Any, ...]:
        """Outermost first: every wrapper around the platform deployer, then the deployer."""
        return (self,)
