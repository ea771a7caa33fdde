"""The plugin API's version, and whether a plugin written for another version may be loaded.

A plugin written for another major version of :mod:`deeploy_core.plugin_api`
uses names that are gone or mean something else; loading it would fail
somewhere deep inside a compile, blaming the wrong thing.  So a plugin may
declare the version it was written against, ``DEEPLOY_CORE_API =
"MAJOR.MINOR"``, on the object its entry point names (a module-level constant
of the plugin module, or a class attribute), and the host refuses it up front
when the majors differ.  Minors only add names, so any minor of the same major
is accepted; a plugin that declares nothing is accepted too (declaring is the
plugin's choice).

The version lives here rather than in :mod:`deeploy_core.plugin_api` because
the host needs it: the API module imports half the core, and the host must not
import it back.
"""

from __future__ import annotations

import re

API_VERSION = "2.1"
"""This core's plugin API version (re-exported as ``deeploy_core.plugin_api.API_VERSION``); bump the minor when
a name is added to the API, the major when one is removed or changes meaning."""

DECLARATION = "DEEPLOY_CORE_API"
"""The name of the constant in which a plugin declares the API version it was written for."""

_VERSION = re.compile(r"^(\d+)\.(\d+)$")


def _major(version: str) -> int:
    match = _VERSION.match(version)
    if match is None:
        raise ValueError(f"API version {version!r} is not MAJOR.MINOR")
    return int(match.group(1))


def api_incompatibility(plugin: object, provided: str = API_VERSION) -> str | None:
    """Why ``plugin`` cannot be loaded by a core providing API ``provided`` (one line), or None when it can.

    None for a plugin without a declaration and for one declaring the same
    major; a reason naming both versions for another major, and one naming the
    value for a declaration that is not a ``"MAJOR.MINOR"`` string.
    """
    declared = getattr(plugin, DECLARATION, None)
    if declared is None:
        return None
    if not isinstance(declared, str) or _VERSION.match(declared) is None:
        return (f"{DECLARATION} = {declared!r} is not a plugin API version of the form \"MAJOR.MINOR\" "
                f"(this deeploy-core provides plugin API {provided})")
    if _major(declared) != _major(provided):
        return (f"written for plugin API {declared}, but this deeploy-core provides plugin API {provided}: "
                f"install a deeploy-core with plugin API {_major(declared)}.x or a release of the plugin "
                f"for plugin API {_major(provided)}.x")
    return None
