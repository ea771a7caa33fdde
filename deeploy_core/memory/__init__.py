"""Memory levels: the hierarchy a platform has, and where each tensor lives in it."""

from deeploy_core.memory.hierarchy import MemoryHierarchy, MemoryLevel, hierarchy_from_dict, load_hierarchy

__all__ = [
    "MemoryHierarchy",
    "MemoryLevel",
    "hierarchy_from_dict",
    "load_hierarchy",
]
