"""Operator variants that compete for the same nodes, told to the user as notes on the plugins' records.

Two operator extensions with different names may both claim one
(platform, domain, op type).  Both stay in use — the precedence rule of
:class:`~deeploy_core.extensions.OperatorExtension` decides which is asked
first — so unlike a duplicate name (:mod:`deeploy_core.plugins.duplicates`)
nothing is ignored and the status stays ``ok``.  But which kernel compiles a
node now depends on another plugin, and an ``override=True`` extension changes
the code of an op the platform may already compile; neither may happen
silently.  So each such pair becomes an :class:`OperatorConflict`, and both
plugins' records carry a note that ``deeploy-core plugins`` shows.  The
per-op view, with the platform's own mappers, is ``deeploy-core
supported-ops``.

Only descriptors are read here (no factory runs, no platform is built): the
host finds these conflicts every time it builds its registry.
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.extensions import OperatorExtension
from deeploy_core.plugins.contribution import Contribution


def _describe(extension: OperatorExtension) -> str:
    return f"operator {extension.name!r} ({extension.op_key} on {extension.platform})"


@dataclass(frozen=True)
class OperatorConflict:
    """``later`` claims the op of ``first`` (whose plugin is asked first), or (``first`` None) overrides the platform.

    ``first`` and ``later`` come from different plugins, each the first
    variant its plugin registers for the op; one plugin's several variants of
    an op are its own ordered alternatives, not a conflict.
    """

    later: Contribution
    first: Contribution | None = None

    @property
    def notes(self) -> list[tuple[Contribution, str]]:
        """(whose record, note) pairs: one line each for the plugins involved."""
        later = self.later.extension
        assert isinstance(later, OperatorExtension)
        if self.first is None:
            return [(self.later, f"{_describe(later)} overrides the platform: it is tried before {later.platform}'s "
                                 f"own mappers for {later.op_key}, which then compile only the nodes it refuses")]
        first = self.first.extension
        assert isinstance(first, OperatorExtension)
        return [
            (self.first, f"{_describe(first)} shadows operator {later.name!r} of plugin {self.later.record.label}, "
                         f"which is tried only for the nodes this one refuses"),
            (self.later, f"{_describe(later)} is shadowed by operator {first.name!r} of plugin "
                         f"{self.first.record.label}, which is tried first (--disable-plugin "
                         f"{self.first.record.name} leaves it out)"),
        ]


def _tried_first(contribution: Contribution) -> bool:
    extension = contribution.extension
    return isinstance(extension, OperatorExtension) and extension.override


def find_operator_conflicts(contributions: list[Contribution]) -> list[OperatorConflict]:
    """The conflicts among ``contributions`` (the kept registrations, in registration order).

    Every override is one; so is every pair of plugins claiming the same op
    on the same platform, the plugin asked first (overrides first, then
    registration order) shadowing the other.
    """
    operators = [c for c in contributions if isinstance(c.extension, OperatorExtension)]
    conflicts = [OperatorConflict(c) for c in operators if _tried_first(c)]
    claims: dict[tuple[str, str], list[Contribution]] = {}
    for contribution in sorted(operators, key=lambda c: not _tried_first(c)):  # stable: registration order kept
        extension = contribution.extension
        assert isinstance(extension, OperatorExtension)
        plugins = claims.setdefault((extension.platform, extension.op_key), [])
        if all(claim.record is not contribution.record for claim in plugins):
            plugins.append(contribution)  # the first variant of each plugin stands for its plugin
    for plugins in claims.values():
        for index, later in enumerate(plugins):
            conflicts.extend(OperatorConflict(later, first) for first in plugins[:index])
    return conflicts


def note_operator_conflicts(contributions: list[Contribution]) -> list[OperatorConflict]:
    """Find the conflicts among ``contributions`` and add their notes to the plugins' records."""
    conflicts = find_operator_conflicts(contributions)
    for conflict in conflicts:
        for contribution, note in conflict.notes:
            contribution.record.note(note)
    return conflicts
