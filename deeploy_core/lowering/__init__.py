"""Graph rewrites the core applies on every platform before the platform's own lowering."""

from deeploy_core.lowering.fold_constants import FoldConstants

__all__ = ["FoldConstants"]
