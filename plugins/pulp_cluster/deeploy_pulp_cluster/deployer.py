"""The cluster's network deployer: the core's deployer plus the performance estimate in report.json."""

from __future__ import annotations

from typing import Any

from deeploy_core.network import GeneratedNetwork, NetworkDeployer
from deeploy_core.platform import Platform

from deeploy_pulp_cluster.cost_model import CostModel, estimate_network


class ClusterDeployer(NetworkDeployer):
    """Adds ``report["cluster"]`` (cores, level sizes) and ``report["estimate"]`` (the cost model, per layer).

    The tiler wrapper keeps its state on this (the innermost) deployer, so the
    tiles, layouts and core splits are read here after they are made.
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
        tiled_layers = getattr(self, "tiled_layers", None)
        if tiled_layers is not None:
            generated.report["estimate"] = estimate_network(tiled_layers, self.ctxt, self.layer_layouts,
                                                            getattr(self, "layer_splits", {}), cores, self.cost_model)
        return generated
