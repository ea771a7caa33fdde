"""Two registrations of one (kind, name): the first one wins, and both users and the loser are told.

Refusing the name to everybody would let one careless plugin switch off a
built-in (a third-party ``first-fit`` would make the default allocator vanish),
and silently keeping one would hide which code actually runs.  So the host
registers plugins in a fixed order — the core's built-ins first, then installed
plugins by distribution name, then entry-point name — and the first
registration of a name is kept.  Installation order never matters, so the same
set of installed plugins always resolves the same way.  Every registration
that lost becomes a :class:`Duplicate`: the losing plugin is listed with
status ``conflict`` (its other extensions keep working) and commands that use
that kind of extension print one warning saying how to get the other one.
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.plugins.records import PluginRecord
from deeploy_core.plugins.contribution import Contribution
from deeploy_core.plugins.selection import normalise_plugin_name


def registration_order(record: PluginRecord) -> tuple[bool, str, str]:
    """Sort key of the order in which plugins register: built-ins, then distribution name, then plugin name."""
    return (not record.builtin, normalise_plugin_name(record.distribution), record.name)


@dataclass(frozen=True)
class Duplicate:
    """A registration of ``kind`` ``name`` by ``loser`` that is ignored because ``winner`` registered it first.

    ``winner`` and ``loser`` are the same record when a plugin registers one
    name twice itself.
    """

    kind: str
    name: str
    winner: PluginRecord
    loser: PluginRecord

    @property
    def message(self) -> str:
        """One line naming the kind and name, who is used, who is ignored, and how to choose the other."""
        subject = f"{self.kind} {self.name!r}"
        if self.winner is self.loser:
            return (f"{subject} is registered twice by plugin {self.winner.label}: the first registration is used, "
                    f"the later one is ignored (only the plugin itself can change which)")
        return (f"{subject} is registered by plugin {self.winner.label} and by plugin {self.loser.label}: "
                f"the registration of {self.winner.name!r} is used, the one of {self.loser.name!r} is ignored; "
                f"--disable-plugin {self.winner.name} selects the other")

    @property
    def warning(self) -> str:
        """The stderr line of a command that uses this kind of extension."""
        return f"warning: {self.message}"


def first_registration_wins(contributions: list[Contribution]) -> tuple[list[Contribution], list[Duplicate]]:
    """Split ``contributions`` (in registration order) into the kept ones and the ignored duplicates."""
    kept: dict[tuple[str, str], Contribution] = {}
    duplicates: list[Duplicate] = []
    for contribution in contributions:
        key = (contribution.extension.kind, contribution.extension.name)
        if key in kept:
            duplicates.append(Duplicate(key[0], key[1], kept[key].record, contribution.record))
        else:
            kept[key] = contribution
    return list(kept.values()), duplicates
