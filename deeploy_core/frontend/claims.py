"""Which schema-less ops a compile accepts: the selected platform's and its operator plugins' claims.

A claim is a mapper for the op key on the platform (its own engines, or an
:class:`~deeploy_core.extensions.OperatorExtension` registered for it); the
declarations of output types and shapes come from the platform's
``custom_ops`` and the operator extensions' ``schema``.  Other installed
platforms are asked only when a node is refused, to say where it would
compile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deeploy_core.frontend.custom_ops import CustomOpSchema, OpClaims
from deeploy_core.frontend.qonnx_ops import QONNX_KEYS, QONNX_SCHEMAS

if TYPE_CHECKING:
    from deeploy_core.platform import Platform
    from deeploy_core.plugins.host import PluginHost


def _plugin_claims(host: PluginHost | None, platform_name: str) -> tuple[set[str], list[CustomOpSchema]]:
    """Op keys operator plugins add to ``platform_name`` and the schemas they declare."""
    if host is None:
        return set(), []
    from deeploy_core.plugins.operators import operator_variants

    keys, schemas = set(), []
    for variant in operator_variants(host, platform_name):
        keys.add(variant.extension.op_key)
        if variant.extension.schema is not None:
            schemas.append(variant.extension.schema)
    return keys, schemas


def _platform_of(host: PluginHost, name: str) -> Platform | None:
    """The data an installed platform declares (``PlatformExtension.platform_data``), None if it declares none.

    Read from the descriptor, never by building the platform's deployer: the
    front end sits below the deployers and must not construct them.
    """
    from deeploy_core.errors import DeeployError, PluginError
    from deeploy_core.extensions import PlatformExtension

    registered = host.registered("platform", name)
    extension = registered.extension
    if not isinstance(extension, PlatformExtension) or extension.platform_data is None:
        return None
    try:
        return extension.platform_data()
    except DeeployError:
        return None
    except Exception as error:  # noqa: BLE001 - re-raised with the plugin named, as PluginHost.create does
        origin = registered.origin
        raise PluginError(origin.plugin, f"{origin.distribution} {origin.version}".strip(),
                          f"reading platform {name!r}'s data", error) from error


def supporting_platforms(host: PluginHost | None, key: str) -> tuple[str, ...]:
    """Installed platforms that map op ``key``, by their own mappers or an operator plugin's, sorted."""
    if host is None:
        return ()
    from deeploy_core.errors import DeeployError

    names = []
    for extension in host.extensions("platform"):
        try:
            platform = _platform_of(host, extension.name)
        except DeeployError:  # another platform's broken data must not hide the refusal being explained
            platform = None
        own = platform is not None and key in platform.op_types()
        if own or key in _plugin_claims(host, extension.name)[0]:
            names.append(extension.name)
    return tuple(sorted(names))


def op_claims(host: PluginHost | None, platform: Platform) -> OpClaims:
    """The claims and declarations a compile for ``platform`` imports its model with.

    The platform's own declaration of an op wins over a plugin's; among
    plugins, the first registered one's.
    """
    plugin_keys, plugin_schemas = _plugin_claims(host, platform.name)
    schemas: dict[tuple[str, str], CustomOpSchema] = {schema.key: schema for schema in platform.custom_ops}
    for schema in (*plugin_schemas, *QONNX_SCHEMAS):  # QONNX's ops: the core lowers them (lowering/qonnx.py)
        schemas.setdefault(schema.key, schema)
    return OpClaims(platform.name, frozenset(platform.op_types()) | frozenset(plugin_keys) | QONNX_KEYS, schemas,
                    lambda key: supporting_platforms(host, key))


def platform_claims(host: PluginHost, platform_name: str) -> OpClaims | None:
    """:func:`op_claims` for an installed platform named by the user (None when it publishes no platform data).

    For the steps that import the model before the compile does (``validate``
    makes its inputs from the imported graph), so that they refuse exactly
    what the compile would, in the same words.
    """
    if platform_name not in {extension.name for extension in host.extensions("platform")}:
        return None  # the compile refuses the name itself, with the list of installed platforms
    platform = _platform_of(host, platform_name)
    return op_claims(host, platform) if platform is not None else None
