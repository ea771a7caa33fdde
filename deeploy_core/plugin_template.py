"""A new plugin distribution, rendered from the project template shipped with the core (``deeploy-core new-plugin``).

The template (``deeploy_core/templates/plugin``, package data) is a copier template; this module checks the
arguments, then lets copier render it.  The result is a complete distribution: ``pyproject.toml`` with the plugin's
entry point in the group the core discovers plugins in, a package holding a minimal working extension of the kind,
tests that subclass the core's conformance suite of that kind, and a README.  What is rendered depends only on the
kind, the name and the core's plugin API version: no date, no path, no answers file.

copier is an optional dependency (the ``template`` extra): nothing else of the core imports it, and without it the
command fails with one line naming the extra.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deeploy_core.errors import DeeployError
from deeploy_core.plugin_api_version import API_VERSION

if TYPE_CHECKING:
    from deeploy_core.plugins import PluginHost

TEMPLATE = Path(__file__).resolve().parent / "templates" / "plugin"
"""The copier template (its ``copier.yml`` declares the questions: ``kind``, ``name``, ``api_version``)."""

KINDS: dict[str, str] = {
    "platform": "platform",
    "memory-level": "memory_level",
    "tiler": "tiler",
    "allocator": "allocator",
    "code-transformation": "code_transformation",
    "operator": "operator",
}
"""The kinds the command takes → the host's kind of the extension the plugin registers."""

NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
MAX_NAME_LENGTH = 40
TEMPLATE_EXTRA = "template"
"""The extra of deeploy-core that installs copier."""


@dataclass(frozen=True)
class PluginNames:
    """The names a plugin called ``name`` is published under (``copier.yml`` derives the same)."""

    name: str
    """The entry-point name: the plugin's name in ``deeploy-core plugins`` and ``--disable-plugin``."""

    @property
    def distribution(self) -> str:
        return f"deeploy-{self.name}"

    @property
    def package(self) -> str:
        return f"deeploy_{self.name.replace('-', '_')}"

    def extension(self, kind: str) -> str:
        """The name the extension is registered under (an operator's names its platform first)."""
        return f"generic-c.{self.name}" if kind == "operator" else self.name


def check_name(name: str) -> PluginNames:
    """``name``'s names, or a one-line error saying what a plugin name may hold."""
    if not NAME_PATTERN.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
        raise DeeployError(f"plugin name {name!r} is not valid: use lower-case letters, digits and single hyphens, "
                           f"starting with a letter, at most {MAX_NAME_LENGTH} characters (e.g. my-allocator)")
    return PluginNames(name)


def check_folder(folder: Path) -> None:
    """Refuse a folder that holds anything: nothing the user has is ever overwritten."""
    if folder.exists() and not folder.is_dir():
        raise DeeployError(f"{folder} exists and is not a folder: choose a new folder for the plugin")
    if folder.is_dir() and any(folder.iterdir()):
        raise DeeployError(f"{folder} is not empty: choose a new (or empty) folder for the plugin; nothing was written")


def check_unused(kind: str, names: PluginNames, host: PluginHost | None) -> None:
    """Refuse names already taken in this environment: an installed package of the same name would be shadowed (or
    shadow the plugin), and a taken extension or plugin name would leave the new plugin in conflict."""
    if importlib.util.find_spec(names.package) is not None:
        raise DeeployError(f"a package {names.package!r} is already installed here: choose another plugin name")
    if host is None:
        return
    taken = {record.name for record in host.plugins()}
    if names.name in taken:
        raise DeeployError(f"a plugin named {names.name!r} is already installed here: choose another plugin name")
    extension = names.extension(kind)
    if any(registered.name == extension for registered in host.extensions(KINDS[kind])):
        owner = host.registered(KINDS[kind], extension).origin.plugin
        raise DeeployError(f"{kind} {extension!r} is already registered by plugin {owner!r}: "
                           "choose another plugin name")


def _render(folder: Path, data: dict[str, str], cleanup: bool) -> None:
    """Let copier render the template into ``folder``; without copier, the one-line error naming the extra."""
    try:
        from copier import Settings, run_copy
        from copier.errors import CopierError
    except ImportError:
        raise DeeployError(f"deeploy-core new-plugin needs copier: pip install 'deeploy-core[{TEMPLATE_EXTRA}]' "
                           "(or pip install 'copier>=9')") from None
    try:
        # Settings(): the user's copier settings (default answers) never change what is rendered.
        run_copy(str(TEMPLATE), folder, data=dict(data), settings=Settings(), defaults=True, overwrite=False,
                 quiet=True, unsafe=False, cleanup_on_error=cleanup)
    except (CopierError, ValueError) as error:
        raise DeeployError(f"rendering the plugin template failed: {' '.join(str(error).split())}") from error


def new_plugin(kind: str, name: str, folder: Path, host: PluginHost | None = None) -> list[Path]:
    """Render a ``kind`` plugin called ``name`` into ``folder`` (created; must be new or empty).

    ``host`` (the installed plugins) lets the check refuse a name already taken; returns the files written,
    relative to ``folder``, sorted.
    """
    if kind not in KINDS:
        raise DeeployError(f"unknown plugin kind {kind!r}: choose one of {', '.join(KINDS)}")
    names = check_name(name)
    check_folder(folder)
    check_unused(kind, names, host)
    _render(folder, {"kind": kind, "name": name, "api_version": API_VERSION}, cleanup=not folder.exists())
    return sorted(path.relative_to(folder) for path in folder.rglob("*") if path.is_file())
