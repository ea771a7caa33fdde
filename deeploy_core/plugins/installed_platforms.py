"""Another installed platform's data, for a platform built on top of it (composition, not copying).

A Cortex-M platform keeps generic C's kernels for every op CMSIS-NN lacks.
It must not import the generic-c package (plugins import the plugin API
only), and it must not copy its tables: it asks for the platform by name,
as the installed plugin declares it.  The lookup ignores the user's plugin
allow-list, because a platform that builds on another needs that one
installed, not selected; it is made once per process.
"""

from __future__ import annotations

import functools

from deeploy_core.errors import DeeployError
from deeploy_core.extensions import PlatformExtension
from deeploy_core.platform.model import Platform
from deeploy_core.plugins.host import PluginHost
from deeploy_core.plugins.selection import PluginSelection


@functools.cache
def _installed_host() -> PluginHost:
    return PluginHost.discover(PluginSelection(), warn=lambda _line: None)


def installed_platform(name: str) -> Platform:
    """The data (:attr:`PlatformExtension.platform_data`) of the installed platform ``name``.

    Raises :class:`DeeployError` naming the platform when it is not
    installed or declares no data, so that a platform built on it fails
    with a line the user can act on (install the plugin that provides it).
    """
    host = _installed_host()
    try:
        extension = host.extension("platform", name)
    except DeeployError:
        raise DeeployError(f"platform {name!r} is not installed (a platform built on it needs it): install the "
                           f"plugin that provides {name!r}") from None
    if not isinstance(extension, PlatformExtension) or extension.platform_data is None:
        raise DeeployError(f"platform {name!r} declares no platform data, so no platform can be built on it")
    return extension.platform_data()
