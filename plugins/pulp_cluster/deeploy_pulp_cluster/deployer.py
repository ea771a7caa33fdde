"""The cluster's network deployer: the core's deployer sized for this compile, plus the performance estimate."""

from __future__ import annotations

from deeploy_core.plugin_api import CompileSettings, GeneratedNetwork, MemoryHierarchy, NetworkDeployer, TilingView

from deeploy_pulp_cluster.cost_model import CostModel, estimate_network
from deeploy_pulp_cluster.defaults import DEFAULT_CORES
from deeploy_pulp_cluster.hierarchy import runtime_level_sizes
from deeploy_pulp_cluster.platform import pulp_cluster_platform


class ClusterDeployer(NetworkDeployer):
    """Adds ``report["cluster"]`` (cores, level sizes), ``report["estimate"]`` (the cost model, per layer) and
    ``report["estimated_cycles"]`` (its total).

    ``settings`` are the core's, as the platform's factory received them;
    ``cores`` is the platform's option of that name.  The level sizes its
    runtime is configured with are those the memory level chose for this
    compile (``compilation.results[MemoryHierarchy]``: its own sizes, a
    hierarchy file's, the ``l1``/``l2``/``l3`` options); they are known once
    every wrapper exists, so the platform data is sized when ``frontend``
    starts.  The tiler puts its tiles, layouts and core splits into the
    compilation's results, which the estimate reads through a read-only
    :class:`~deeploy_core.tiling.view.TilingView` once the network is generated.
    """

    def __init__(self, settings: CompileSettings | None = None, cores: int = DEFAULT_CORES,
                 cost_model: CostModel | None = None) -> None:
        self.cores = cores
        self.cluster_level_sizes = runtime_level_sizes(None)
        super().__init__(pulp_cluster_platform(tuple(sorted(self.cluster_level_sizes.items())), cores), settings)
        self.cost_model = cost_model or CostModel()

    def frontend(self) -> None:
        self.cluster_level_sizes = runtime_level_sizes(self.compilation.results.get(MemoryHierarchy))
        self.compilation.platform = pulp_cluster_platform(tuple(sorted(self.cluster_level_sizes.items())), self.cores)
        super().frontend()

    def generate(self) -> GeneratedNetwork:
        generated = super().generate()
        cores = self.platform.parallelism.cores
        generated.report["cluster"] = {"cores": cores, "level_sizes": self.cluster_level_sizes}
        tiling = TilingView.of(self.compilation, cores)
        if tiling is not None:
            estimate = estimate_network(tiling, self.cost_model)
            generated.report["estimate"] = estimate
            # At top level too, beside the core's ``traffic`` and ``level_peaks``: the three figures a reader
            # compares between tilings, without knowing which platform section holds the cycles.
            generated.report["estimated_cycles"] = estimate["cycles"]
        return generated
