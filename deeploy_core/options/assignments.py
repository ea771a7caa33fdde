"""What the user asked for: ``NAME=VALUE`` with an optional qualifier, and the short flags that stand for one.

``--option NAME=VALUE`` sets the option ``NAME`` of whichever selected
extension declares it.  When two selected extensions declare the same name,
a qualifier says which: ``KIND.NAME=VALUE`` (``platform.cores=8``,
``memory_level.l1=16000``; ``memory-level`` is accepted too) or
``EXTENSION.NAME=VALUE`` (``tetris-random.seed=3``).  Option names never
contain a dot, so the qualifier is everything before the last one.

The core's short flags (:mod:`deeploy_core.options.short_flags`) become
assignments too, remembering the flag so that messages name it as typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from deeploy_core.errors import DeeployError
from deeploy_core.options.short_flags import CORES, FUSION, TILING_STRATEGY, ShortFlag, level_flag


@dataclass(frozen=True)
class OptionAssignment:
    """One value the user gave: ``qualifier.name = value``, and how they wrote it (for messages).

    ``value`` is text from the command line or a Python value from the API;
    the option's :class:`~deeploy_core.options.spec.OptionSpec` converts it.
    """

    name: str
    value: object
    source: str
    """How the user wrote it: ``--option cores=8`` or ``--cores 8``; messages start with it."""
    qualifier: str | None = None
    flag: ShortFlag | None = None

    @property
    def target(self) -> str:
        """``qualifier.name`` or ``name``."""
        return f"{self.qualifier}.{self.name}" if self.qualifier else self.name


def split_key(key: str) -> tuple[str | None, str]:
    """``"tetris-random.seed"`` → ``("tetris-random", "seed")``; ``"cores"`` → ``(None, "cores")``."""
    qualifier, dot, name = key.strip().rpartition(".")
    return (qualifier if dot else None), name


def parse_option_text(text: str) -> OptionAssignment:
    """``--option`` text (``NAME=VALUE``, ``KIND.NAME=VALUE``, ``EXTENSION.NAME=VALUE``) as an assignment."""
    key, sep, value = text.partition("=")
    qualifier, name = split_key(key)
    if not sep or not name or qualifier == "":
        raise DeeployError(f"--option {text}: expected NAME=VALUE, KIND.NAME=VALUE or EXTENSION.NAME=VALUE "
                           f"(e.g. --option cores=8)")
    return OptionAssignment(name, value, f"--option {text}", qualifier)


def mapping_assignments(options: Mapping[str, object]) -> list[OptionAssignment]:
    """The assignments of an API caller's ``{"NAME" or "QUALIFIER.NAME": value}``, in the mapping's order."""
    made = []
    for key, value in options.items():
        qualifier, name = split_key(str(key))
        if not name or qualifier == "":
            raise DeeployError(f"option {key!r}: expected NAME, KIND.NAME or EXTENSION.NAME")
        made.append(OptionAssignment(name, value, f"--option {key}={value}", qualifier))
    return made


def flag_assignment(flag: ShortFlag, value: object) -> OptionAssignment:
    """What short flag ``flag`` given ``value`` sets."""
    source = f"{flag.flag} {value}" if flag.shows_value else flag.flag
    return OptionAssignment(flag.option, value, source, flag=flag)


def short_flag_assignments(level_sizes: Mapping[str, int], cores: int | None,
                           tiling_strategy: str | None, fusion: str | None = None) -> list[OptionAssignment]:
    """The assignments the short flags (or the API's alias fields of the same names) stand for."""
    made = [flag_assignment(level_flag(level), size) for level, size in level_sizes.items()]
    if cores is not None:
        made.append(flag_assignment(CORES, cores))
    if tiling_strategy is not None:
        made.append(flag_assignment(TILING_STRATEGY, tiling_strategy))
    if fusion is not None:
        made.append(flag_assignment(FUSION, fusion))
    return made
