"""A PULP-like cluster for deeploy_core: memory levels L3/L2/L1, a cluster DMA and a host emulation runtime."""
