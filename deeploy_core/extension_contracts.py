"""What each kind of extension's factory must return, as typing Protocols the descriptors and the host are typed with.

A descriptor's ``factory`` used to be ``Callable[..., Any]`` and
``PluginHost.create`` returned ``Any``: a plugin whose factory returned the
wrong thing type-checked fine and failed inside a compile.  Each kind now names
its product:

==================== ==========================================================
kind                 the factory returns
==================== ==========================================================
platform             a :class:`DeployerContract` (``Deployer`` subclasses are)
memory level, tiler  a :class:`DeployerContract` wrapping the one it is given
                     (``DeployerWrapper`` subclasses are)
allocator            an :class:`AllocatorContract`: ``solve(problem)``
code transformation  a ``CodeTransformation`` (the ABC in ``codegen``)
operator             a ``NodeMapper``
==================== ==========================================================

The deployer and allocator contracts are Protocols, not the base classes
themselves, because the extension descriptors sit below the deployers in the
package layers (``tests/test_package_layers.py``): the descriptors may name
what a deployer must offer, not import the deployers.
"""

from __future__ import annotations

from os import PathLike
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from deeploy_core.allocation import AllocationProblem, AllocationSolution
    from deeploy_core.progress import ProgressLike


@runtime_checkable
class DeployerContract(Protocol):
    """A deployer, or a wrapper around one: runs the compile's stages.

    Its compile state (``compilation``) is the core's business: the core checks
    that a platform's product is a ``Deployer`` and a wrapper's a
    ``DeployerWrapper`` before it reads it, so the contract names only the
    stages (and this module stays below the compile state in the layers).
    """

    def frontend(self) -> None:
        """Import and check the model."""
        ...

    def lower(self) -> None:
        """Rewrite the graph into operators the platform supports."""
        ...

    def parse(self) -> None:
        """Map every node to an op mapping and build the network context."""
        ...

    def bind(self) -> None:
        """Choose bindings and plan buffers."""
        ...

    def generate(self) -> object:
        """Emit the code and return what was generated."""
        ...

    def deploy(self, model: str | PathLike[str], progress: ProgressLike = None) -> object:
        """Run every stage on ``model`` and return what the last one returned (the generated network)."""
        ...


@runtime_checkable
class AllocatorContract(Protocol):
    """A static allocator: one offset per block, or a proof that the blocks do not fit."""

    def solve(self, problem: AllocationProblem) -> AllocationSolution:
        """Place ``problem``'s blocks (lifetimes and sizes) below its capacity."""
        ...
