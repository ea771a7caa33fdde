"""The cluster's network deployer: the core's deployer plus the performance estimate in report.json."""

from __future__ import annotations

from typing import Any

from deeploy_core.network import GeneratedNetwork, NetworkDeployer
from deeploy_core.platform import Platform
from deeploy_core.tiling.state import TilingState

from deeploy_pulp_cluster.cost_model import CostModel, estimate_network


class ClusterDeployer(NetworkDeployer):
    """Adds ``report["cluster"]`` (cores, level sizes) and ``report["estimate"]`` (the cost model, per layer).

    The tiler puts its tiles, layouts and core splits into the compilation's
    results (:class:`~deeploy_core.tiling.state.TilingState`), where the
    estimate reads them once the network is generated.
    """

    def __init__(self, platform: Platform, cluster_sizes: dict[str, int], cost_model: CostModel | None = None,
                 **options: Any) -> None:
        super().__init__(platform, **options)
        self.cluster_level_sizes = dict(cluster_sizes)
        self.cost_model = cost_model or CostModel()

    def generate(self) -> GeneratedNetwork:
        generated = super().generate()
        cores = self.platform.parallelism.cores
        generated.report["cluster"] = {"cores": cores, "level_sizes": self.cluster_level_sizes}
        tiling = self.compilation.results.get(TilingState)
        if tiling is not None:
            generated.report["estimate"] = estimate_network(tiling.tiled_layers, self.compilation.ctxt, tiling.layouts,
                                                            tiling.splits, cores, self.cost_model)
        return generated
