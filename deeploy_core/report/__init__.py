"""Reports about a compiled network."""

from deeploy_core.report.network_report import layer_rows, network_report

__all__ = ["layer_rows", "network_report"]
