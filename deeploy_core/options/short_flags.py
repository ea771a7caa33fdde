"""The core's short flags that stand for an extension's option: ``--cores``, ``--l1``/``--l2``/``--l3``, ``--tiling-strategy``,
``--fusion``.

Users typed these before options belonged to extensions, so they stay, as
aliases: each sets one option of the selected extension of one kind (the
platform's ``cores``, the memory level's ``l1``, the tiler's ``strategy``).
Unlike ``--option NAME=VALUE``, a flag knows which kind it addresses, so when
that extension does not declare the option its message can say why in the
flag's own terms ("platform 'generic-c' has a single core").
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.options.levels import level_option_name


@dataclass(frozen=True)
class ShortFlag:
    """A core flag that sets option ``option`` of the selected extension of ``kind``.

    ``missing`` is the message when that extension does not declare the
    option, formatted with ``owner`` (``platform 'generic-c'``) and ``takes``
    (the options it does declare); ``absent`` when the compile selects no
    extension of ``kind``.
    """

    flag: str
    kind: str
    option: str
    missing: str
    absent: str
    shows_value: bool = True
    """Whether messages quote the value after the flag (``--cores 4: …``) or the flag alone (``--l3: …``)."""


CORES = ShortFlag("--cores", "platform", "cores",
                  missing="{owner} has a single core; --cores is for cluster platforms",
                  absent="no platform is selected")
TILING_STRATEGY = ShortFlag("--tiling-strategy", "tiler", "strategy",
                            missing="{owner} declares no 'strategy' option (it takes: {takes})",
                            absent="tiling is off, so no tiler uses a strategy; turn tiling on with --l1, "
                                   "--memory-level or --tiler, or drop the option")
FUSION = ShortFlag("--fusion", "tiler", "fusion",
                   missing="{owner} declares no 'fusion' option (it takes: {takes})",
                   absent="tiling is off, so there are no layers to fuse; turn tiling on with --l1, --memory-level or "
                          "--tiler, or drop the option")


def level_flag(level: str) -> ShortFlag:
    """``--l1`` for level ``L1``: sets the memory level's option ``l1``."""
    option = level_option_name(level)
    return ShortFlag(f"--{option}", "memory_level", option,
                     missing=f"the memory hierarchy has no level {level} to resize ({{owner}} takes: {{takes}}); "
                             f"drop the option or choose a hierarchy with that level",
                     absent="no memory level is selected", shows_value=False)
