"""The clock reads a profile build puts between the layers of ``RunNetwork``.

A per-layer profile needs a timestamp before each layer and after the last,
and nothing of the kind may reach the firmware a user ships.  ``RunNetwork``
therefore calls a macro that is empty unless the file is compiled with
``-DDC_PROFILE`` (``make profile``, ``validate --profile``); then it calls a
function the *application* defines (``DeeployNetwork_profile_mark``, renamed
by ``--prefix``), so the clock is whatever the target has: ``clock_gettime``
on the host, a cycle counter on a microcontroller.  The generated code never
reads a clock itself and stays free of platform headers.
"""

from __future__ import annotations

from deeploy_core.codegen.api_names import NetworkApi

PROFILE_DEFINE = "DC_PROFILE"
"""The preprocessor symbol that turns the marks on (``-DDC_PROFILE``)."""

MARK_MACRO = "DC_PROFILE_MARK"


def profile_macro(api: NetworkApi) -> list[str]:
    """``Network.c``'s definition of the mark: a call to the application's function, or nothing at all."""
    return [
        f"/* Built with -D{PROFILE_DEFINE}: {api.profile_mark}(k) before layer k and after the last; "
        "otherwise nothing. */",
        f"#ifdef {PROFILE_DEFINE}",
        f"#define {MARK_MACRO}(mark) {api.profile_mark}(mark)",
        "#else",
        f"#define {MARK_MACRO}(mark) ((void)0)",
        "#endif",
        "",
    ]


def profile_mark_call(mark: int) -> str:
    """The statement before layer ``mark`` (or, with ``mark`` = the layer count, after the last layer)."""
    return f"{MARK_MACRO}({mark}u);"


def profile_declaration(api: NetworkApi, layer_count: int) -> list[str]:
    """``Network.h``'s part: the layer count and the prototype of the function a profile build calls."""
    return [
        f"/* {api.run} runs {api.num_layers} layers. Built with -D{PROFILE_DEFINE} (make profile), it calls "
        f"{api.profile_mark}(k) */",
        f"/* before layer k and once more, with k = {api.num_layers}, after the last: define it to read a clock. */",
        f"#define {api.num_layers} {layer_count}",
        f"void {api.profile_mark}(uint32_t mark);",
    ]
