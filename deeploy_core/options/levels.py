"""The level-size options a memory-level extension declares: one per level, named after it.

Level sizes belong to the memory level that owns the hierarchy, not to the
core: a two-level hierarchy has no L3 to resize, a plugin's hierarchy may
name its levels differently.  So each memory-level extension declares one
``int`` option per level, called by the level's name in lower case (``l1``
for ``L1``); its default is None, meaning "the hierarchy's own size", so a
size given in a ``--memory-hierarchy`` file is never overwritten by a default.
The core's short flags ``--l1``/``--l2``/``--l3`` set the option of that name.
"""

from __future__ import annotations

from typing import Sequence

from deeploy_core.options.spec import OptionSpec


def level_option_name(level: str) -> str:
    """The option that sizes ``level``: its name in lower case (``L1`` → ``l1``)."""
    return level.lower()


def level_size_options(levels: Sequence[tuple[str, int | None]]) -> tuple[OptionSpec, ...]:
    """One size option per ``(level name, size in bytes or None for unbounded)``, in the order given."""
    return tuple(
        OptionSpec(level_option_name(name), int, None, minimum=1,
                   help=f"size of level {name} in bytes; unset: the hierarchy's own "
                        f"({'unbounded' if size is None else f'{size} B'})")
        for name, size in levels)

