"""The test program ``validate`` runs on a board: inputs compiled in, outputs printed as hex lines.

A board under QEMU has no file system to read ``inputs.bin`` from or write
``outputs.bin`` to, only semihosting's standard output.  So the harness holds
the inputs as C arrays (one program per sample set), runs ``RunNetwork``
``repeats`` times (every run must give the same bytes, as on the host) and
prints each output's bytes as ``dc_output O OFFSET HEX`` lines, which
:func:`parse_outputs` turns back into arrays.  Built with ``-DDC_PROFILE`` it
defines the profile mark as an empty out-of-line function: the instruction
counter finds it by its symbol and reads the layer number from ``r0``, so the
same ELF gives the outputs under QEMU and per-layer counts under the counter.
"""

from __future__ import annotations

import numpy as np

from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi, default_name_shim
from deeploy_core.errors import DeeployError
from deeploy_core.ir.tensor_spec import TensorSpec

BOARD_HARNESS_NAME = "dc_board_main.c"
OUTPUT_TAG = "dc_output"
"""The first word of every line that carries output bytes."""
SAMPLE_TAG = "dc_sample"
"""The line before each sample's outputs (several samples run in one program)."""
LINE_BYTES = 64
"""Output bytes per printed line: one semihosting write per line, lines short enough for any terminal log."""

_BODY = r"""
#ifdef DC_PROFILE
/* Found by the instruction counter by its symbol; k arrives in r0.  Out of line, and the asm keeps the argument. */
void MARK(uint32_t mark) __attribute__((noinline, used));
void MARK(uint32_t mark) { __asm__ volatile("" : : "r"(mark) : "memory"); }
#endif

static unsigned char dc_first[TOTAL_BYTES];

static void dc_print_output(int o, const unsigned char *bytes, size_t size) {
    static const char digits[] = "0123456789abcdef";
    char line[2 * LINE_BYTES + 1];
    for (size_t at = 0; at < size; at += LINE_BYTES) {
        size_t n = size - at < LINE_BYTES ? size - at : LINE_BYTES;
        for (size_t i = 0; i < n; ++i) {
            line[2 * i] = digits[bytes[at + i] >> 4];
            line[2 * i + 1] = digits[bytes[at + i] & 15];
        }
        line[2 * n] = '\0';
        printf("TAG %d %lu %s\n", o, (unsigned long)at, line);
    }
}

int main(void) {
    InitNetwork();
    for (int s = 0; s < SAMPLES; ++s) {
        for (int i = 0; i < DEEPLOY_NETWORK_NUM_INPUTS; ++i) {
            memcpy(DeeployNetwork_inputs[i], dc_inputs[s][i], DeeployNetwork_inputs_bytes[i]);
        }
        for (int r = 0; r < REPEATS; ++r) {
            RunNetwork();
            size_t at = 0;
            for (int o = 0; o < DEEPLOY_NETWORK_NUM_OUTPUTS; ++o) {
                if (r == 0) {
                    memcpy(dc_first + at, DeeployNetwork_outputs[o], DeeployNetwork_outputs_bytes[o]);
                } else if (memcmp(dc_first + at, DeeployNetwork_outputs[o], DeeployNetwork_outputs_bytes[o]) != 0) {
                    printf("RunNetwork is not repeatable: output %d changed in run %d\n", o, r + 1);
                    return 4;
                }
                at += DeeployNetwork_outputs_bytes[o];
            }
        }
        printf("SAMPLE_TAG %d\n", s);
        for (int o = 0; o < DEEPLOY_NETWORK_NUM_OUTPUTS; ++o) {
            dc_print_output(o, (const unsigned char *)DeeployNetwork_outputs[o], DeeployNetwork_outputs_bytes[o]);
        }
    }
    return 0;
}
"""


def _c_bytes(name: str, data: bytes) -> str:
    """``data`` as a C array, 24 bytes a line (an empty tensor gets one padding byte: C has no empty arrays)."""
    values = [f"0x{byte:02x}" for byte in data] or ["0x00"]
    rows = [", ".join(values[at:at + 24]) for at in range(0, len(values), 24)]
    return f"static const unsigned char {name}[{len(values)}] = {{\n    " + ",\n    ".join(rows) + "\n};"


def board_harness_source(inputs: list[TensorSpec], outputs: list[TensorSpec],
                         data: dict[str, np.ndarray] | list[dict[str, np.ndarray]], repeats: int,
                         api: NetworkApi = DEFAULT_API) -> str:
    """The harness for one sample set (``data`` by input name) or several (a list, run one after the other in one
    program, each printed after a ``dc_sample S`` line), in the input types the network declares."""
    samples = data if isinstance(data, list) else [data]
    arrays = [_c_bytes(f"dc_input_{number}_{index}",
                       np.ascontiguousarray(sample[spec.name], dtype=spec.dtype).tobytes())
              for number, sample in enumerate(samples) for index, spec in enumerate(inputs)]
    rows = ", ".join("{" + (", ".join(f"dc_input_{number}_{index}" for index in range(len(inputs))) or "0") + "}"
                     for number in range(len(samples)))
    total = sum(int(np.prod(spec.shape, dtype=np.int64)) * np.dtype(spec.dtype).itemsize for spec in outputs)
    body = (_BODY.replace("MARK", api.profile_mark).replace("TOTAL_BYTES", str(max(total, 1)))
            .replace("REPEATS", str(max(repeats, 1))).replace("SAMPLE_TAG", SAMPLE_TAG).replace("TAG", OUTPUT_TAG)
            .replace("SAMPLES", str(len(samples))))
    return "\n".join([
        "/* Generated by deeploy_core: validation harness for a board (inputs compiled in, outputs printed). */",
        "#include <stdint.h>", "#include <stdio.h>", "#include <string.h>", '#include "Network.h"',
        *default_name_shim(api), f"#define LINE_BYTES {LINE_BYTES}", *arrays,
        f"static const unsigned char *const dc_inputs[{len(samples)}][{max(len(inputs), 1)}] = {{{rows}}};", body,
    ])


def parse_samples(stdout: str, outputs: list[TensorSpec], count: int) -> list[list[np.ndarray]]:
    """Each of ``count`` samples' arrays, split at the harness's ``dc_sample S`` lines."""
    parts: list[list[str]] = []
    for line in stdout.splitlines():
        if line.startswith(SAMPLE_TAG + " "):
            parts.append([])
        elif parts:
            parts[-1].append(line)
    if len(parts) != count:
        raise DeeployError(f"the board printed {len(parts)} of {count} samples: the program stopped early")
    return [parse_outputs("\n".join(lines), outputs) for lines in parts]


def parse_outputs(stdout: str, outputs: list[TensorSpec]) -> list[np.ndarray]:
    """The arrays the harness printed, by position; an incomplete print is an error (the program was cut short)."""
    chunks: dict[int, dict[int, bytes]] = {}
    for line in stdout.splitlines():
        fields = line.split()
        if len(fields) in (3, 4) and fields[0] == OUTPUT_TAG:
            chunks.setdefault(int(fields[1]), {})[int(fields[2])] = bytes.fromhex(fields[3] if len(fields) == 4 else "")
    arrays = []
    for index, spec in enumerate(outputs):
        dtype = np.dtype(spec.dtype)
        count = int(np.prod(spec.shape, dtype=np.int64))
        raw = b"".join(chunk for _, chunk in sorted(chunks.get(index, {}).items()))
        if len(raw) != count * dtype.itemsize:
            raise DeeployError(f"the board printed {len(raw)} bytes of output {index} ({spec.name}), not "
                               f"{count * dtype.itemsize}: the program stopped early")
        arrays.append(np.frombuffer(raw, dtype=dtype, count=count).reshape(spec.shape).copy())
    return arrays
