"""Memory levels: the hierarchy a platform has, and where each tensor lives in it."""

from deeploy_core.memory.hierarchy import MemoryHierarchy, MemoryLevel, hierarchy_from_dict, load_hierarchy
from deeploy_core.memory.wrapper import MemoryLevelDeployerWrapper, annotate_memory_levels

__all__ = [
    "MemoryHierarchy",
    "MemoryLevel",
    "MemoryLevelDeployerWrapper",
    "annotate_memory_levels",
    "hierarchy_from_dict",
    "load_hierarchy",
]
