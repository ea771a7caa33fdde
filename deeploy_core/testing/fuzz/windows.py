"""Random but valid sliding-window attributes (kernel, strides, pads, dilations, auto_pad) for Conv and pooling.

Every choice keeps each output dimension positive and stays inside what ONNX
Runtime accepts (pads smaller than the kernel for pooling, no dilation with
``SAME_*`` padding, no ``SAME_*`` max pooling with a kernel below its
stride).  Average pooling is never dilated: the platform does not support it.
Dilated max pooling is drawn without padding or ``ceil_mode``: a dilated
window could then fall entirely into the padding, whose value ONNX leaves
unspecified (ONNX Runtime uses the lowest float).
"""

from __future__ import annotations

from hypothesis import strategies as st

from deeploy_core.testing.fuzz.builder import GraphBuilder

AUTO_PADS = ("NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
"""Explicit pads most of the time (the first entry is what hypothesis shrinks to)."""


def _axis(draw: st.DrawFn, size: int, dilation: int, explicit_pads: bool) -> tuple[int, int, int, int, int]:
    """(kernel, stride, dilation, pad begin, pad end) of one spatial axis of length ``size``."""
    kernel = draw(st.integers(1, 3))
    if (kernel - 1) * dilation + 1 > size + (2 * (kernel - 1) if explicit_pads else 0):
        dilation = 1
    extent = (kernel - 1) * dilation + 1
    stride = draw(st.integers(1, 2))
    if not explicit_pads:
        if extent > size:
            kernel, extent = 1, 1
        return kernel, stride, dilation, 0, 0
    begin = draw(st.integers(max(0, extent - size - (kernel - 1)), kernel - 1))
    end = draw(st.integers(max(0, extent - size - begin), kernel - 1))
    return kernel, stride, dilation, begin, end


def window_attributes(draw: st.DrawFn, builder: GraphBuilder, spatial: tuple[int, ...], op: str,
                      dilations: bool) -> dict[str, object]:
    """Attributes of a window over ``spatial`` for ``op``; ``dilations`` says whether the op may dilate."""
    dilation = 2 if dilations and draw(st.integers(0, 3)) == 0 else 1
    pooling = op != "Conv"
    explicit = not (pooling and dilation > 1)
    axes = [_axis(draw, size, dilation, explicit) for size in spatial]
    kernel, strides, dilation_list = [a[0] for a in axes], [a[1] for a in axes], [a[2] for a in axes]
    attributes: dict[str, object] = {"kernel_shape": kernel, "strides": strides}
    if any(d > 1 for d in dilation_list):
        attributes["dilations"] = dilation_list
        builder.note(f"{op}:dilated")
    # No auto_pad with dilations: ONNX Runtime refuses them ("Dilation not supported for AutoPadType::SAME_UPPER").
    auto_pad = draw(st.sampled_from(AUTO_PADS)) if explicit and "dilations" not in attributes else "NOTSET"
    if auto_pad == "VALID" and any(k > s for k, s in zip(kernel, spatial)):
        auto_pad = "NOTSET"
    if auto_pad.startswith("SAME") and op == "MaxPool" and any(k < s for k, s in zip(kernel, strides)):
        auto_pad = "NOTSET"  # ONNX Runtime's MaxPool rejects the negative SAME padding of a kernel below its stride
    if auto_pad == "NOTSET":
        pads = [a[3] for a in axes] + [a[4] for a in axes]
        if any(pads):
            attributes["pads"] = pads
            builder.note(f"{op}:padded")
    else:
        attributes["auto_pad"] = auto_pad
        builder.note(f"{op}:{auto_pad}")
    if any(s > 1 for s in strides):
        builder.note(f"{op}:strided")
    if pooling and auto_pad == "NOTSET" and explicit and draw(st.integers(0, 3)) == 0:
        attributes["ceil_mode"] = 1
        builder.note(f"{op}:ceil_mode")
    builder.note(f"{op}:{len(spatial)}d")
    return attributes
