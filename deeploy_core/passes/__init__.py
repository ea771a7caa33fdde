"""Pass infrastructure: analyses and transformations over graphs.

The semantics follow DaCe's pass pipelines: passes declare what they
modify, what they depend on and when they must be reapplied, and a
:class:`Pipeline` runs them in dependency order while reusing results that
are still valid.
"""

from deeploy_core.passes.base import Pass
from deeploy_core.passes.errors import PassDependencyCycleError
from deeploy_core.passes.modifies import Modifies
from deeploy_core.passes.pipeline import Pipeline
from deeploy_core.passes.results import PipelineResults
from deeploy_core.passes.subgraph import OpChainPattern, Subgraph, SubgraphTransformation
from deeploy_core.passes.visitor import VisitorPass

__all__ = [
    "Modifies",
    "OpChainPattern",
    "Pass",
    "PassDependencyCycleError",
    "Pipeline",
    "PipelineResults",
    "Subgraph",
    "SubgraphTransformation",
    "VisitorPass",
]
