"""The five builds every single-op dialect test runs: generic-c untiled and tiled into a 512-byte L1 with single and
double buffering, and the 8-core cluster with the same L1 and both bufferings.

``test_dialect_ops``, ``test_dialect_elementwise`` and ``test_dialect_rowwise`` run their ops on the same builds;
the list lives here so that they share it without importing one another.  The whole-network tests
(``test_dialect_networks``) and the linear-op tests (``test_dialect_linear``) size L1 for their own tensors.
"""

from __future__ import annotations

from deeploy_core.api import CompileOptions

CONFIGURATIONS: dict[str, CompileOptions] = {
    "generic-c untiled": CompileOptions(platform="generic-c"),
    "generic-c L1 512 single": CompileOptions(platform="generic-c", level_sizes={"L1": 512}, buffering="single"),
    "generic-c L1 512 double": CompileOptions(platform="generic-c", level_sizes={"L1": 512}, buffering="double"),
    "pulp-cluster 8 cores L1 512 single": CompileOptions(platform="pulp-cluster", level_sizes={"L1": 512},
                                                         buffering="single", cores=8),
    "pulp-cluster 8 cores L1 512 double": CompileOptions(platform="pulp-cluster", level_sizes={"L1": 512},
                                                         buffering="double", cores=8),
}
"""By name, as the tests' parameter ids show them."""
