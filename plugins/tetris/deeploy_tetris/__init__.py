"""Tetris allocators for deeploy_core: blocks fall, in some order, onto the blocks they overlap in time."""

from deeploy_tetris.co_optimised import TetrisCoOptAllocator
from deeploy_tetris.random_order import TetrisRandomAllocator

__all__ = ["TetrisCoOptAllocator", "TetrisRandomAllocator"]
