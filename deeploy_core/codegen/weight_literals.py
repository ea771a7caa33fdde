"""The initializers of weight arrays, formatted in bulk.

A network's weights are most of what a compile writes (torchvision's
resnet18: 11.7 million floats), so they are formatted with numpy, a million
values at a time, never one Python call per value.  Floats are written as
their IEEE-754 bit patterns (``0x3f800000``), which are exact, need no
rounding on the way back and are shorter than any exact decimal or
hexadecimal float: 11 characters per float32, 2.75 times its raw bytes.  The
arrays holding them are unions of the bit patterns and the floats
(``Network_weights.h``), so reading the floats is well defined C99.
Integers are written in decimal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

PER_LINE = 16
"""Values per line of an initializer."""
_CHUNK = 1 << 20
_BIT_PATTERNS: dict[np.dtype[Any], np.dtype[Any]] = {np.dtype(np.float32): np.dtype(np.uint32),
                                                     np.dtype(np.float64): np.dtype(np.uint64),
                                                     np.dtype(np.float16): np.dtype(np.uint16)}
"""float16 is carried as its bit pattern (``uint16_t``), so its union has the bits twice."""


def _hex_words(words: np.ndarray) -> bytes:
    """``0x…,`` for every word (fixed width, lower-case), ``PER_LINE`` to a line, as ASCII bytes."""
    digits = words.dtype.itemsize * 2
    width = digits + 3
    # big-endian bytes put each word's most significant digit first; bytes.hex() runs at memory speed
    hexadecimal = words.astype(words.dtype.newbyteorder(">")).tobytes().hex().encode("ascii")
    text = np.empty((len(words), width), dtype=np.uint8)
    text[:, 0], text[:, 1], text[:, -1] = ord("0"), ord("x"), ord(",")
    text[:, 2:-1] = np.frombuffer(hexadecimal, dtype=np.uint8).reshape(len(words), digits)
    flat = text.reshape(-1)
    breaks = np.arange(PER_LINE * width, flat.size, PER_LINE * width)
    return bytes(np.insert(flat, breaks, ord("\n")))


def bit_pattern_rows(values: np.ndarray) -> str:
    """The float array ``values`` (float32 or float64, flattened) as hexadecimal bit patterns, comma-terminated,
    ``PER_LINE`` to a line."""
    words = np.ascontiguousarray(values).reshape(-1).view(_BIT_PATTERNS[np.dtype(values.dtype)])
    if words.size == 0:
        return "0,"
    # chunks start at a multiple of PER_LINE, so each chunk's lines are whole lines
    return "\n".join(_hex_words(words[start:start + _CHUNK]).decode("ascii")
                     for start in range(0, words.size, _CHUNK))


def integer_rows(values: np.ndarray) -> str:
    """The integer (or bool) array ``values`` in decimal, comma-terminated, ``PER_LINE`` to a line.

    ``INT32_MIN`` and the 64-bit types are spelled so that no literal overflows ``int`` or ``long``.
    """
    flat = np.ascontiguousarray(values).reshape(-1)
    if flat.size == 0:
        return "0,"
    if flat.dtype == np.bool_:
        flat = flat.astype(np.uint8)
    items = list(map(str, flat.tolist()))
    if flat.dtype == np.int64:
        items = [f"INT64_C({item})" for item in items]
    elif flat.dtype == np.uint64:
        items = [f"UINT64_C({item})" for item in items]
    elif flat.dtype == np.int32:
        items = [item if item != "-2147483648" else "(-2147483647 - 1)" for item in items]
    return "\n".join(",".join(items[start:start + PER_LINE]) + "," for start in range(0, len(items), PER_LINE))


def has_bit_patterns(dtype: np.dtype) -> bool:
    """Whether weights of ``dtype`` are written as bit patterns (floats) rather than decimal (integers)."""
    return np.dtype(dtype) in _BIT_PATTERNS


def bits_c_type(dtype: np.dtype) -> str:
    """The unsigned C type of the bit patterns of float ``dtype``."""
    return f"uint{_BIT_PATTERNS[np.dtype(dtype)].itemsize * 8}_t"
