"""The host emulator of the PULP HAL (runtime/src/pulp_emulator.c), exercised by small C programs built with gcc.

Every program is tiny: the cost of a test is one gcc invocation (a little more with a sanitizer) and one run.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[1] / "deeploy_pulp_cluster" / "runtime"
CFLAGS = ["-std=c99", "-O2", "-pthread", "-Wall", "-Wextra", "-Werror"]
SANITIZER_FLAGS = {
    None: [],
    "thread": ["-g", "-fsanitize=thread"],
    "address": ["-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"],
}
RUN_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "TSAN_OPTIONS": "halt_on_error=0",
}

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


def _env() -> dict[str, str]:
    return {**os.environ, **RUN_ENV}


@functools.lru_cache(maxsize=None)
def _sanitizer_problem(sanitize: str) -> str | None:
    """Why `sanitize` cannot be used on this machine (None if it can): a trivial threaded program must build and run."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text(
            "#include <pthread.h>\nstatic void *f(void *a) { return a; }\n"
            "int main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); return 0; }\n"
        )
        exe = Path(tmp) / "probe"
        cc = subprocess.run(
            ["gcc", *CFLAGS, *SANITIZER_FLAGS[sanitize], str(src), "-o", str(exe)], capture_output=True, text=True
        )
        if cc.returncode != 0:
            return f"-fsanitize={sanitize} does not build here: {cc.stderr.strip()[:300]}"
        run = subprocess.run([str(exe)], capture_output=True, text=True, env=_env(), timeout=30)
        if run.returncode != 0:
            return f"-fsanitize={sanitize} programs do not run here: {run.stderr.strip()[:300]}"
    return None


def build_and_run(
    tmp_path: Path, source: str, sanitize: str | None = None, defines: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Compiles `source` with the emulator (optionally with a sanitizer: "thread" or "address" = address+undefined),
    runs it and returns the finished process (stdout/stderr as text). Skips the test if the sanitizer is unusable."""
    if sanitize is not None:
        problem = _sanitizer_problem(sanitize)
        if problem is not None:
            pytest.skip(problem)
    name = f"prog_{sanitize or 'plain'}_{'_'.join(defines) or 'x'}"
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    cmd = [
        "gcc",
        *CFLAGS,
        *SANITIZER_FLAGS[sanitize],
        *(f"-D{d}" for d in defines),
        f"-I{RUNTIME / 'include'}",
        str(RUNTIME / "src" / "pulp_emulator.c"),
        str(src),
        "-o",
        str(exe),
    ]
    cc = subprocess.run(cmd, capture_output=True, text=True)
    assert cc.returncode == 0, f"compilation failed:\n{cc.stderr}"
    return subprocess.run([str(exe)], capture_output=True, text=True, env=_env(), timeout=60)


# --------------------------------------------------------------------------------------------------------------------
# The positive program: fork/chunk/barrier, 1-D/2-D/3-D DMA in both directions, L3->L2, statistics.

POSITIVE = r"""
#include "pulp_emulator.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); return 1; } } while (0)

typedef struct {
    uint32_t *values;            /* in L1 */
    uint8_t owner[1000];
    uint32_t small_begin[8], small_end[8];
    int ok;
} fill_job;

static void fill(void *arg) {
    fill_job *job = (fill_job *)arg;
    uint32_t id = pulp_core_id(), b, e;
    pulp_chunk(1000, &b, &e);
    for (uint32_t i = b; i < e; ++i) {
        job->values[i] = i * 3u + 1u;
        job->owner[i] = (uint8_t)id;
    }
    pulp_chunk(11, &job->small_begin[id], &job->small_end[id]);
    pulp_count_macs(e - b);
    pulp_barrier();
    if (id == 0) {
        int ok = pulp_num_cores() == 8;
        for (uint32_t i = 0; i < 1000; ++i) ok &= job->values[i] == i * 3u + 1u && job->owner[i] == i / 125u;
        for (uint32_t c = 0; c < 8; ++c) {
            uint32_t len = c < 3 ? 2u : 1u, begin = c < 3 ? 2u * c : c + 3u;
            ok &= job->small_begin[c] == begin && job->small_end[c] == begin + len;
        }
        job->ok = ok;
    }
}

typedef struct { pulp_dma_id id; int ok; } dma_job;

/* Core 1 starts a transfer, core 0 waits for it: a transfer may cross cores. */
static void cross_core_dma(void *arg) {
    dma_job *job = (dma_job *)arg;
    uint8_t *l1 = pulp_l1_base() + 8192, *l2 = pulp_l2_base() + 20000;
    if (pulp_core_id() == 1) job->id = pulp_dma_start_1d(l1, l2, 64);
    pulp_barrier();
    if (pulp_core_id() == 0) {
        pulp_dma_wait(job->id);
        job->ok = memcmp(l1, l2, 64) == 0;
    }
}

static uint8_t pattern(uint32_t i) { return (uint8_t)(i * 7u + 3u); }

int main(void) {
    pulp_config cfg = {16000, 64 * 1024, 256 * 1024, 8};
    CHECK(pulp_init(&cfg) == 0);
    uint8_t *l1 = pulp_l1_base(), *l2 = pulp_l2_base(), *l3 = pulp_l3_base();
    CHECK(pulp_init(&cfg) == 0 && pulp_l1_base() == l1);             /* same config: no-op */
    pulp_config bad = cfg;
    bad.cores = 0;
    CHECK(pulp_init(&bad) == -1);
    bad.cores = PULP_MAX_CORES + 1;
    CHECK(pulp_init(&bad) == -1);
    CHECK(pulp_l1_size() == 16000 && pulp_l2_size() == 65536 && pulp_l3_size() == 262144);
    CHECK(((uintptr_t)l1 & 15) == 0 && ((uintptr_t)l2 & 15) == 0 && ((uintptr_t)l3 & 15) == 0);
    long page = sysconf(_SC_PAGESIZE);
    CHECK((uintptr_t)(l1 + 16000) % (uintptr_t)page == 0);         /* the level ends at its guard page */
    CHECK(pulp_core_id() == 0 && pulp_num_cores() == 8);
    uint32_t b, e;
    pulp_chunk(10, &b, &e);
    CHECK(b == 0 && e == 10);                                        /* outside a fork: the whole range */
    pulp_reset_stats();

    fill_job job;
    memset(&job, 0, sizeof job);
    job.values = (uint32_t *)l1;
    pulp_cluster_fork(fill, &job);
    CHECK(job.ok);

    for (uint32_t i = 0; i < 24000; ++i) l2[i] = pattern(i);
    for (uint32_t i = 0; i < 300; ++i) l3[i] = (uint8_t)(255u - i);

    /* 1-D L2 -> L1 */
    pulp_dma_id d = pulp_dma_start_1d(l1, l2, 100);
    pulp_dma_wait(d);
    for (uint32_t i = 0; i < 100; ++i) CHECK(l1[i] == pattern(i));

    /* 2-D L2 -> L1: 5 rows of 13 bytes, source rows 40 apart, destination rows 16 apart */
    memset(l1 + 256, 0x11, 16 * 5);
    d = pulp_dma_start_2d(l1 + 256, l2 + 1000, 13, 5, 16, 40);
    for (uint32_t r = 0; r < 5; ++r)   /* bytes between the rows may be used while the transfer is in flight */
        for (uint32_t c = 13; c < 16; ++c) CHECK(l1[256 + r * 16 + c] == 0x11);
    pulp_dma_wait(d);
    for (uint32_t r = 0; r < 5; ++r)
        for (uint32_t c = 0; c < 16; ++c)
            CHECK(l1[256 + r * 16 + c] == (c < 13 ? pattern(1000 + r * 40 + c) : 0x11));

    /* 3-D L2 -> L1: 3 planes of 4 rows of 7 bytes */
    memset(l1 + 1024, 0x22, 120);
    d = pulp_dma_start_3d(l1 + 1024, l2 + 2000, 7, 4, 3, 9, 20, 40, 100);
    pulp_dma_wait(d);
    for (uint32_t p = 0; p < 3; ++p)
        for (uint32_t r = 0; r < 4; ++r)
            for (uint32_t c = 0; c < 9; ++c)
                CHECK(l1[1024 + p * 40 + r * 9 + c] == (c < 7 ? pattern(2000 + p * 100 + r * 20 + c) : 0x22));
    for (uint32_t i = 2 * 40 + 3 * 9 + 7; i < 120; ++i) CHECK(l1[1024 + i] == 0x22);   /* after the last row */

    /* an odd-length destination: the bytes right after it stay usable while it is in flight */
    memset(l1 + 3000, 0x66, 16);
    d = pulp_dma_start_1d(l1 + 3000, l2 + 5000, 13);
    CHECK(l1[3013] == 0x66 && l1[3014] == 0x66 && l1[3015] == 0x66);
    pulp_dma_wait(d);
    CHECK(memcmp(l1 + 3000, l2 + 5000, 13) == 0 && l1[3013] == 0x66);

    /* 1-D L1 -> L2 */
    memset(l2 + 30000, 0x33, 101);
    d = pulp_dma_start_1d(l2 + 30000, l1, 100);
    pulp_dma_wait(d);
    CHECK(memcmp(l2 + 30000, l1, 100) == 0 && l2[30100] == 0x33);

    /* 2-D L1 -> L2: the rows above back, 21 bytes apart */
    memset(l2 + 31000, 0x44, 21 * 5);
    d = pulp_dma_start_2d(l2 + 31000, l1 + 256, 13, 5, 21, 16);
    pulp_dma_wait(d);
    for (uint32_t r = 0; r < 5; ++r)
        for (uint32_t c = 0; c < 21; ++c)
            CHECK(l2[31000 + r * 21 + c] == (c < 13 ? pattern(1000 + r * 40 + c) : 0x44));

    /* 3-D L1 -> L2: the planes above back, dense (rows 7 apart, planes 28 apart) */
    memset(l2 + 32000, 0x55, 90);
    d = pulp_dma_start_3d(l2 + 32000, l1 + 1024, 7, 4, 3, 7, 9, 28, 40);
    pulp_dma_wait(d);
    for (uint32_t p = 0; p < 3; ++p)
        for (uint32_t r = 0; r < 4; ++r)
            for (uint32_t c = 0; c < 7; ++c)
                CHECK(l2[32000 + p * 28 + r * 7 + c] == pattern(2000 + p * 100 + r * 20 + c));
    for (uint32_t i = 84; i < 90; ++i) CHECK(l2[32000 + i] == 0x55);

    /* 1-D L3 -> L2, two transfers in flight at once, waited in the other order */
    pulp_dma_id d1 = pulp_dma_start_1d(l2 + 40000, l3, 150);
    pulp_dma_id d2 = pulp_dma_start_1d(l2 + 40150, l3 + 150, 150);
    CHECK(d2 > d1);
    pulp_dma_wait(d2);
    pulp_dma_wait(d1);
    for (uint32_t i = 0; i < 300; ++i) CHECK(l2[40000 + i] == (uint8_t)(255u - i));

    dma_job dj = {0, 0};
    pulp_cluster_fork(cross_core_dma, &dj);
    CHECK(dj.ok);

    pulp_stats s;
    pulp_get_stats(&s);
    CHECK(s.forks == 2 && s.barrier_waits == 16 && s.macs[0] == 125 && s.macs[7] == 125);
    pulp_print_stats(stdout);
    pulp_shutdown();
    puts("OK");
    return 0;
}
"""


def _check_positive(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "OK", proc.stdout
    stats = json.loads(lines[-2])
    assert stats == {
        "dma_bytes": {"L1->L2": 100 + 65 + 84, "L2->L1": 100 + 65 + 84 + 13 + 64, "L3->L2": 300},
        "dma_transfers": {"L1->L2": 3, "L2->L1": 5, "L3->L2": 2},
        "dma_overlapped_bytes": {},
        "macs": [125] * 8,
        "barrier_waits": 16,
        "forks": 2,
    }


def test_positive(tmp_path: Path) -> None:
    _check_positive(build_and_run(tmp_path, POSITIVE))


def test_positive_under_thread_sanitizer(tmp_path: Path) -> None:
    proc = build_and_run(tmp_path, POSITIVE, sanitize="thread")
    assert "WARNING: ThreadSanitizer" not in proc.stderr, proc.stderr
    _check_positive(proc)


def test_positive_under_address_and_undefined_sanitizers(tmp_path: Path) -> None:
    proc = build_and_run(tmp_path, POSITIVE, sanitize="address")
    assert "runtime error" not in proc.stderr, proc.stderr
    _check_positive(proc)


# --------------------------------------------------------------------------------------------------------------------
# Negative programs: each misuse is caught.

PRELUDE = r"""
#include "pulp_emulator.h"
#include <stdio.h>
#include <stdlib.h>
static void init(uint32_t cores) {
    pulp_config cfg = {16000, 64 * 1024, 256 * 1024, cores};
    if (pulp_init(&cfg) != 0) { puts("init failed"); _Exit(2); }
}
"""

EARLY_READ = PRELUDE + r"""
int main(void) {
    init(8);
    pulp_l2_base()[0] = 7;
    pulp_dma_id d = pulp_dma_start_1d(pulp_l1_base(), pulp_l2_base(), 64);
    volatile uint8_t *dst = pulp_l1_base();
    printf("early 0x%02x\n", dst[0]);
    fflush(stdout);
    pulp_dma_wait(d);
    printf("late 0x%02x\n", dst[0]);
    return 0;
}
"""


def test_read_before_wait_is_use_after_poison_under_asan(tmp_path: Path) -> None:
    proc = build_and_run(tmp_path, EARLY_READ, sanitize="address")
    assert proc.returncode != 0
    assert "use-after-poison" in proc.stderr


def test_read_before_wait_sees_garbage(tmp_path: Path) -> None:
    proc = build_and_run(tmp_path, EARLY_READ)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["early", "0xa5", "late", "0x07"]


@pytest.mark.parametrize("level", ["l1", "l2", "l3"])
def test_write_past_the_end_of_a_level(tmp_path: Path, level: str) -> None:
    source = PRELUDE + f"""
int main(void) {{
    init(8);
    volatile uint8_t *p = pulp_{level}_base();
    p[pulp_{level}_size() - 1] = 1;   /* the last byte is fine */
    p[pulp_{level}_size()] = 1;
    puts("not caught");
    return 0;
}}
"""
    proc = build_and_run(tmp_path, source)
    assert proc.returncode == 86, proc.stdout + proc.stderr
    assert f"outside {level.upper()}" in proc.stderr
    assert "offset +0 past its end" in proc.stderr
    assert "not caught" not in proc.stdout


def test_write_before_the_start_of_l1(tmp_path: Path) -> None:
    source = PRELUDE + r"""
int main(void) {
    init(8);
    volatile uint8_t *p = pulp_l1_base();
    p[-1000] = 1;  /* inside the guard page before L1 (the 384 bytes just before its base are slack) */
    return 0;
}
"""
    proc = build_and_run(tmp_path, source)
    assert proc.returncode == 86, proc.stderr
    assert "outside L1" in proc.stderr and "before its start" in proc.stderr


def test_unrelated_segfault_is_reported_and_crashes(tmp_path: Path) -> None:
    source = PRELUDE + r"""
int main(void) {
    init(2);
    volatile uintptr_t address = 16;
    volatile uint8_t *p = (volatile uint8_t *)address;
    p[0] = 1;
    return 0;
}
"""
    proc = build_and_run(tmp_path, source)
    assert proc.returncode == -11, proc.stderr
    assert "pulp emulator: segmentation fault at 0x10" in proc.stderr


def test_double_wait(tmp_path: Path) -> None:
    source = PRELUDE + r"""
int main(void) {
    init(8);
    pulp_dma_id d = pulp_dma_start_1d(pulp_l1_base(), pulp_l2_base(), 16);
    pulp_dma_wait(d);
    pulp_dma_wait(d);
    return 0;
}
"""
    proc = build_and_run(tmp_path, source)
    assert proc.returncode == 87, proc.stderr
    assert "that is not in flight" in proc.stderr


def test_dma_outside_the_memories(tmp_path: Path) -> None:
    source = PRELUDE + r"""
int main(void) {
    init(8);
    uint8_t stack[64];
    pulp_dma_id d = pulp_dma_start_1d(stack, pulp_l2_base(), sizeof stack);
    pulp_dma_wait(d);
    printf("%d\n", stack[0]);
    return 0;
}
"""
    proc = build_and_run(tmp_path, source)
    assert proc.returncode == 89, proc.stderr
    assert "outside the cluster memories" in proc.stderr


def test_dma_crossing_the_end_of_l1(tmp_path: Path) -> None:
    source = PRELUDE + r"""
int main(void) {
    init(8);
    pulp_dma_start_2d(pulp_l1_base() + pulp_l1_size() - 100, pulp_l2_base(), 10, 11, 10, 10);
    return 0;
}
"""
    proc = build_and_run(tmp_path, source)
    assert proc.returncode == 89, proc.stderr


def test_too_many_transfers_in_flight(tmp_path: Path) -> None:
    source = PRELUDE + r"""
int main(void) {
    init(8);
    for (int i = 0; i <= PULP_DMA_MAX_IN_FLIGHT; ++i) pulp_dma_start_1d(pulp_l1_base(), pulp_l2_base(), 4);
    return 0;
}
"""
    proc = build_and_run(tmp_path, source)
    assert proc.returncode == 88, proc.stderr
    assert "in flight" in proc.stderr


RACE = PRELUDE + r"""
static uint32_t sink;
static void task(void *arg) {
    (void)arg;
    volatile uint32_t *word = (volatile uint32_t *)pulp_l1_base();
    if (pulp_core_id() == 1) *word = 42;
#ifdef WITH_BARRIER
    pulp_barrier();
#endif
    if (pulp_core_id() == 0) sink += *word;
#ifdef WITH_BARRIER
    pulp_barrier();
#endif
}
int main(void) {
    init(2);
    for (int i = 0; i < 8; ++i) pulp_cluster_fork(task, NULL);
    printf("%u\n", sink);
    return 0;
}
"""


def test_missing_barrier_is_a_data_race_under_tsan(tmp_path: Path) -> None:
    proc = build_and_run(tmp_path, RACE, sanitize="thread")
    assert "data race" in proc.stderr
    assert proc.returncode != 0 or "WARNING: ThreadSanitizer" in proc.stderr


def test_with_barrier_no_race_under_tsan(tmp_path: Path) -> None:
    proc = build_and_run(tmp_path, RACE, sanitize="thread", defines=("WITH_BARRIER",))
    assert proc.returncode == 0, proc.stderr
    assert "ThreadSanitizer" not in proc.stderr
    assert proc.stdout.strip() == str(8 * 42)


# --------------------------------------------------------------------------------------------------------------------
# L3: its own engine (queue, ids, bandwidth) and the overlap counter that shows what double buffering hides.

L3_ENGINE = PRELUDE + r"""
#include <string.h>
int main(void) {
    init(8);
    uint8_t *l1 = pulp_l1_base(), *l2 = pulp_l2_base(), *l3 = pulp_l3_base();
    for (int i = 0; i < 1000; ++i) l3[i] = (uint8_t)(i * 5 + 1);
    static pulp_dma_id cluster[PULP_DMA_MAX_IN_FLIGHT];
    for (int i = 0; i < PULP_DMA_MAX_IN_FLIGHT; ++i) cluster[i] = pulp_dma_start_1d(l1, l2, 4);  /* cluster DMA full */
    pulp_dma_id up = pulp_dma_start_1d(l2 + 100, l3, 1000);      /* the L3 controller still takes transfers */
    pulp_dma_id down = pulp_dma_start_1d(l3 + 5000, l2 + 2000, 16);
    if ((up & PULP_L3_DMA_ID_BIT) == 0 || (down & PULP_L3_DMA_ID_BIT) == 0 || (cluster[0] & PULP_L3_DMA_ID_BIT) != 0) {
        puts("ids");
        return 1;
    }
    pulp_dma_wait(up);
    pulp_dma_wait(down);
    for (int i = 0; i < PULP_DMA_MAX_IN_FLIGHT; ++i) pulp_dma_wait(cluster[i]);
    if (memcmp(l2 + 100, l3, 1000) != 0) { puts("copy"); return 1; }
    pulp_print_stats(stdout);
    return 0;
}
"""


def printed_stats(tmp_path: Path, program: str) -> dict:
    """The statistics a test program prints last (pulp_print_stats), after it ran successfully."""
    proc = build_and_run(tmp_path, program)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_l3_transfers_have_their_own_engine(tmp_path: Path) -> None:
    """A full cluster DMA queue does not stop the L3 controller, whose ids carry PULP_L3_DMA_ID_BIT; bytes per link."""
    stats = printed_stats(tmp_path, L3_ENGINE)
    assert stats["dma_bytes"] == {"L2->L1": 4 * 4096, "L3->L2": 1000, "L2->L3": 16}
    assert stats["dma_transfers"] == {"L2->L1": 4096, "L3->L2": 1, "L2->L3": 1}


OVERLAP = PRELUDE + r"""
static void compute(void *arg) { (void)arg; pulp_count_macs(10); }
int main(void) {
    init(4);
    uint8_t *l1 = pulp_l1_base(), *l2 = pulp_l2_base(), *l3 = pulp_l3_base();
    pulp_dma_id hidden = pulp_dma_start_1d(l2, l3, 300);           /* in flight while the cores compute */
    pulp_dma_id hidden_too = pulp_dma_start_1d(l1, l2 + 4096, 64);
    pulp_cluster_fork(compute, NULL);
    pulp_dma_wait(hidden);
    pulp_dma_wait(hidden_too);
    pulp_dma_id exposed = pulp_dma_start_1d(l2 + 1024, l3 + 1024, 200);  /* started and waited with no compute */
    pulp_dma_wait(exposed);
    pulp_print_stats(stdout);
    return 0;
}
"""


def test_overlapped_bytes_count_transfers_in_flight_while_cores_compute(tmp_path: Path) -> None:
    stats = printed_stats(tmp_path, OVERLAP)
    assert stats["dma_bytes"] == {"L2->L1": 64, "L3->L2": 500}
    assert stats["dma_overlapped_bytes"] == {"L2->L1": 64, "L3->L2": 300}


L3_BANDWIDTH = "#define _POSIX_C_SOURCE 200809L\n" + PRELUDE + r"""
#include <time.h>
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
int main(void) {
    setenv("PULP_EMULATOR_L3_BYTES_PER_US", "10", 1);   /* 10 MB/s: 200000 bytes take 20 ms */
    init(1);
    uint8_t *l1 = pulp_l1_base(), *l2 = pulp_l2_base(), *l3 = pulp_l3_base();
    double t0 = now_ms();
    pulp_dma_wait(pulp_dma_start_1d(l3, l2, 40000));
    pulp_dma_wait(pulp_dma_start_1d(l2, l3, 40000));
    pulp_dma_wait(pulp_dma_start_1d(l3 + 40000, l2, 40000));
    pulp_dma_wait(pulp_dma_start_1d(l2, l3 + 40000, 40000));
    pulp_dma_wait(pulp_dma_start_1d(l3 + 80000, l2, 40000));
    double exposed = now_ms() - t0;
    t0 = now_ms();
    pulp_dma_id id = pulp_dma_start_1d(l2, l3, 50000);   /* 5 ms */
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);                            /* "compute" for 20 ms: the transfer finishes meanwhile */
    double before = now_ms();
    pulp_dma_wait(id);
    double hidden = now_ms() - before;
    t0 = now_ms();
    pulp_dma_wait(pulp_dma_start_1d(l1, l2, 15000));   /* the cluster DMA is not slowed down */
    double cluster = now_ms() - t0;
    printf("%f %f %f\n", exposed, hidden, cluster);
    return 0;
}
"""


def test_l3_bandwidth_makes_waits_block_until_the_transfer_would_be_done(tmp_path: Path) -> None:
    """With PULP_EMULATOR_L3_BYTES_PER_US the L3 engine is slow: a wait right after the start blocks for the
    transfer's time, a wait after enough computation does not (what double buffering of the L3 hop buys)."""
    proc = build_and_run(tmp_path, L3_BANDWIDTH)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    exposed, hidden, cluster = map(float, proc.stdout.split())
    assert exposed >= 19.9, exposed
    assert hidden < 2.0 and cluster < 2.0, (hidden, cluster)
