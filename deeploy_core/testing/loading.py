"""Loading the plugin under test so that a broken plugin fails with the host's own reason.

The host contains a broken plugin (it is marked failed and contributes
nothing), which is what users need, but in a plugin author's test it hides
the cause: the suite would go on and fail later with ``no allocator named
'mine' (available: first-fit)``, which says what is missing but not why.
Every fixture and conformance suite therefore loads the plugin under test
through :func:`load_plugin_under_test`, which stops at once with the reason
the host recorded (import error, bad hookimpl, raising hook, duplicate name …).
"""

from __future__ import annotations

from deeploy_core.plugins import PluginHost, PluginRecord, PluginStatus


class PluginLoadFailed(AssertionError):
    """The plugin under test did not load; the message carries the host's reason."""


def require_loaded(record: PluginRecord) -> PluginRecord:
    """``record`` if its plugin works, else :class:`PluginLoadFailed` with its status and reason."""
    if record.status is not PluginStatus.OK:
        raise PluginLoadFailed(f"plugin {record.name!r} {record.status.value}: {record.error}")
    return record


def load_plugin_under_test(
    host: PluginHost, plugin: object, name: str, distribution: str = "local", version: str = ""
) -> PluginRecord:
    """Add ``plugin`` to ``host`` and build the registry; raise :class:`PluginLoadFailed` if it is not ``ok``.

    The registry is built here because registry hooks, and the duplicate-name
    check, only run then: a plugin whose hook raises is not known to be
    broken until that point.
    """
    host.add_plugin(plugin, name=name, distribution=distribution, version=version)
    return require_loaded(host.record(name))
