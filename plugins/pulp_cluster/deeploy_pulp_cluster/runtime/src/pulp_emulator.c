/* pulp_emulator.c - host emulation of pulp_hal.h with pthreads, guard-paged memories and deferred DMA copies.
 *
 * Checks (each prints one line on stderr and ends the process with the exit code of pulp_emulator.h):
 *  - every memory level is its own mapping ending exactly at a PROT_NONE guard page (and with one before it), so an
 *    access past a level's end faults; a SIGSEGV/SIGBUS handler names the level (not installed under AddressSanitizer,
 *    which reports such faults itself);
 *  - a DMA start fills its destination with 0xA5 (and poisons it under ASan); the copy only happens at the wait, so a
 *    destination read before its wait gives wrong data or an ASan use-after-poison report;
 *  - transfers from or to L3 go to their own engine (the L3 controller: its own queue and ids) that is slower when
 *    PULP_EMULATOR_L3_BYTES_PER_US is set: a wait then also blocks until the engine would have finished the transfer;
 *  - waits on ids that are not in flight, too many transfers in flight, transfers outside the memories. */
#define _GNU_SOURCE

#include "pulp_emulator.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define PULP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PULP_ASAN 1
#endif
#endif

#ifdef PULP_ASAN
#include <sanitizer/asan_interface.h>
#define PULP_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define PULP_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define PULP_POISON(p, n) ((void)(p), (void)(n))
#define PULP_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define PULP_POISON_BYTE 0xA5
#define ALTSTACK_BYTES (64u * 1024u)
#define PULP_L3 2 /* index of L3 in levels[] */

static const char *const level_names[PULP_LEVELS] = {"L1", "L2", "L3"};

/* ---------------------------------------------------------------------------------------------------------------- */
/* Memories                                                                                                          */

typedef struct {
    uint8_t *map;      /* whole mapping: guard, [slack], data, guard */
    size_t map_bytes;
    uint8_t *base;     /* first byte of the level */
    uint32_t size;     /* configured bytes */
    uint8_t *low_end;  /* [map, low_end) is PROT_NONE (the guard before) */
    uint8_t *high_beg; /* [high_beg, map + map_bytes) is PROT_NONE (the guard after) */
} level_t;

static level_t levels[PULP_LEVELS];
static pulp_config current;
static int initialised;

static size_t page_bytes(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096u;
}

static int map_level(level_t *lv, uint32_t size) {
    size_t page = page_bytes();
    size_t size16 = ((size_t)size + 15u) & ~(size_t)15u;
    size_t rounded = (size16 + page - 1u) / page * page;
    lv->map_bytes = page + rounded + page;
    void *m = mmap(NULL, lv->map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        lv->map = NULL;
        return -1;
    }
    lv->map = (uint8_t *)m;
    lv->high_beg = lv->map + page + rounded;
    lv->base = lv->high_beg - size16;
    lv->size = size;
    lv->low_end = lv->map + ((size_t)(lv->base - lv->map) / page * page);
    if (lv->high_beg > lv->low_end &&
        mprotect(lv->low_end, (size_t)(lv->high_beg - lv->low_end), PROT_READ | PROT_WRITE) != 0) {
        munmap(lv->map, lv->map_bytes);
        lv->map = NULL;
        return -1;
    }
    return 0;
}

static void unmap_level(level_t *lv) {
    if (lv->map != NULL) {
        /* Leave no poisoned shadow behind for whatever gets mapped here next. */
        PULP_UNPOISON(lv->low_end, (size_t)(lv->high_beg - lv->low_end));
        munmap(lv->map, lv->map_bytes);
    }
    memset(lv, 0, sizeof *lv);
}

/* The level holding [p, p + span) completely, or -1. */
static int level_of(const void *p, uint64_t span) {
    uintptr_t a = (uintptr_t)p;
    for (int l = 0; l < PULP_LEVELS; ++l) {
        uintptr_t b = (uintptr_t)levels[l].base;
        if (levels[l].map == NULL || a < b) continue;
        uint64_t off = (uint64_t)(a - b);
        if (off <= levels[l].size && span <= levels[l].size - off) return l;
    }
    return -1;
}

uint8_t *pulp_l1_base(void) { return levels[0].base; }
uint32_t pulp_l1_size(void) { return levels[0].size; }
uint8_t *pulp_l2_base(void) { return levels[1].base; }
uint32_t pulp_l2_size(void) { return levels[1].size; }
uint8_t *pulp_l3_base(void) { return levels[2].base; }
uint32_t pulp_l3_size(void) { return levels[2].size; }

/* ---------------------------------------------------------------------------------------------------------------- */
/* Fault handler (async-signal-safe: only write, sigaction, _exit)                                                   */

#ifndef PULP_ASAN
static char altstacks[PULP_MAX_CORES][ALTSTACK_BYTES];
static int handler_installed;

static size_t put_str(char *buf, size_t at, const char *s) {
    while (*s != '\0' && at < 255) buf[at++] = *s++;
    return at;
}

static size_t put_uint(char *buf, size_t at, uint64_t v, unsigned radix) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % radix];
        v /= radix;
    } while (v != 0);
    while (n > 0 && at < 255) buf[at++] = tmp[--n];
    return at;
}

static void fault_handler(int sig, siginfo_t *info, void *context) {
    (void)context;
    char buf[256];
    size_t at = 0;
    uint8_t *addr = (uint8_t *)info->si_addr;
    for (int l = 0; l < PULP_LEVELS; ++l) {
        const level_t *lv = &levels[l];
        if (lv->map == NULL) continue;
        int before = addr >= lv->map && addr < lv->low_end;
        int after = addr >= lv->high_beg && addr < lv->map + lv->map_bytes;
        if (!before && !after) continue;
        at = put_str(buf, at, "pulp emulator: access outside ");
        at = put_str(buf, at, level_names[l]);
        at = put_str(buf, at, " (address 0x");
        at = put_uint(buf, at, (uint64_t)(uintptr_t)addr, 16);
        if (after) {
            at = put_str(buf, at, ", offset +");
            at = put_uint(buf, at, (uint64_t)(addr - (lv->base + lv->size)), 10);
            at = put_str(buf, at, " past its end; ");
        } else {
            at = put_str(buf, at, ", offset -");
            at = put_uint(buf, at, (uint64_t)(lv->base - addr), 10);
            at = put_str(buf, at, " before its start; ");
        }
        at = put_str(buf, at, level_names[l]);
        at = put_str(buf, at, " has ");
        at = put_uint(buf, at, lv->size, 10);
        at = put_str(buf, at, " bytes)\n");
        if (write(STDERR_FILENO, buf, at) < 0) { /* nothing left to do */
        }
        _exit(PULP_EXIT_OUT_OF_BOUNDS);
    }
    at = put_str(buf, at, "pulp emulator: segmentation fault at 0x");
    at = put_uint(buf, at, (uint64_t)(uintptr_t)addr, 16);
    at = put_str(buf, at, "\n");
    if (write(STDERR_FILENO, buf, at) < 0) {
    }
    /* Not ours: fall back to the default action, the faulting instruction runs again and the process dies of it. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
}

static void set_altstack(uint32_t core) {
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = altstacks[core];
    ss.ss_size = ALTSTACK_BYTES;
    sigaltstack(&ss, NULL);
}

static void clear_altstack(void) {
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, NULL);
}

static void install_handler(void) {
    if (handler_installed) return;
    handler_installed = 1;
    set_altstack(0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}
#else
static void set_altstack(uint32_t core) { (void)core; }
static void clear_altstack(void) {}
static void install_handler(void) {}
#endif

/* ---------------------------------------------------------------------------------------------------------------- */
/* Statistics and fatal errors                                                                                       */

static pulp_stats stats;
static pthread_mutex_t stats_mx = PTHREAD_MUTEX_INITIALIZER; /* dma_*, forks */

static void fatal(int code, const char *message) {
    fputs(message, stderr);
    fflush(stderr);
    fflush(stdout);
    _exit(code);
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* Cores, fork, barrier                                                                                              */

static __thread uint32_t t_core_id;
static __thread int t_in_fork;

static pthread_mutex_t bar_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bar_cv = PTHREAD_COND_INITIALIZER;
static uint32_t bar_parties, bar_waiting, bar_finished, bar_generation;

typedef struct {
    pulp_task task;
    void *arg;
    uint32_t id;
} core_start;

static void barrier_deadlock(void) {
    fatal(PULP_EXIT_MISUSE, "pulp emulator: a core returned from the fork while others wait at a barrier\n");
}

static void run_core(const core_start *c) {
    t_core_id = c->id;
    t_in_fork = 1;
    c->task(c->arg);
    t_in_fork = 0;
    t_core_id = 0;
    pthread_mutex_lock(&bar_mx);
    bar_finished++;
    if (bar_waiting > 0 && bar_waiting + bar_finished == bar_parties) barrier_deadlock();
    pthread_mutex_unlock(&bar_mx);
}

static void *core_thread(void *p) {
    const core_start *c = (const core_start *)p;
    set_altstack(c->id);
    run_core(c);
    clear_altstack();
    return NULL;
}

void pulp_cluster_fork(pulp_task task, void *arg) {
    if (!initialised) fatal(PULP_EXIT_MISUSE, "pulp emulator: pulp_cluster_fork before pulp_init\n");
    if (t_in_fork) fatal(PULP_EXIT_MISUSE, "pulp emulator: nested pulp_cluster_fork\n");
    uint32_t n = current.cores;
    pthread_mutex_lock(&stats_mx);
    stats.forks++;
    pthread_mutex_unlock(&stats_mx);
    pthread_mutex_lock(&bar_mx);
    bar_parties = n;
    bar_waiting = 0;
    bar_finished = 0;
    pthread_mutex_unlock(&bar_mx);

    core_start starts[PULP_MAX_CORES];
    pthread_t threads[PULP_MAX_CORES];
    for (uint32_t i = 0; i < n; ++i) {
        starts[i].task = task;
        starts[i].arg = arg;
        starts[i].id = i;
    }
    for (uint32_t i = 1; i < n; ++i) {
        if (pthread_create(&threads[i], NULL, core_thread, &starts[i]) != 0)
            fatal(PULP_EXIT_MISUSE, "pulp emulator: cannot create a core thread\n");
    }
    run_core(&starts[0]);
    for (uint32_t i = 1; i < n; ++i) pthread_join(threads[i], NULL);
}

uint32_t pulp_core_id(void) { return t_core_id; }

uint32_t pulp_num_cores(void) { return current.cores; }

void pulp_barrier(void) {
    pthread_mutex_lock(&bar_mx);
    stats.barrier_waits++;
    if (t_in_fork && bar_parties > 1) {
        uint32_t generation = bar_generation;
        if (++bar_waiting == bar_parties) {
            bar_waiting = 0;
            bar_generation++;
            pthread_cond_broadcast(&bar_cv);
        } else {
            if (bar_waiting + bar_finished == bar_parties) barrier_deadlock();
            while (generation == bar_generation) pthread_cond_wait(&bar_cv, &bar_mx);
        }
    }
    pthread_mutex_unlock(&bar_mx);
}

void pulp_chunk(uint32_t total, uint32_t *begin, uint32_t *end) {
    uint32_t n = t_in_fork ? current.cores : 1u;
    uint32_t id = t_in_fork ? t_core_id : 0u;
    uint32_t share = total / n, extra = total % n;
    uint32_t b = id * share + (id < extra ? id : extra);
    *begin = b;
    *end = b + share + (id < extra ? 1u : 0u);
}

/* Every pulp_count_macs call (a core finished computing a share) advances the compute epoch; a transfer during whose
 * flight the epoch moved overlapped computation (stats.dma_overlapped_bytes).
 *
 * The counter is a relaxed atomic, not a mutex: a mutex that every core locks after its share and the DMA locks before
 * a copy would order each core's tile writes before the leader's store in ThreadSanitizer's eyes, hiding a missing
 * barrier whenever the other cores happen to finish first. Real hardware has no such synchronisation, so the
 * emulator's bookkeeping must not add any. */
static uint64_t compute_epoch;

#if defined(__GNUC__)
static uint64_t current_epoch(void) { return __atomic_load_n(&compute_epoch, __ATOMIC_RELAXED); }

static void advance_epoch(void) { (void)__atomic_fetch_add(&compute_epoch, 1u, __ATOMIC_RELAXED); }
#else
static pthread_mutex_t epoch_mx = PTHREAD_MUTEX_INITIALIZER;

static uint64_t current_epoch(void) {
    pthread_mutex_lock(&epoch_mx);
    uint64_t epoch = compute_epoch;
    pthread_mutex_unlock(&epoch_mx);
    return epoch;
}

static void advance_epoch(void) {
    pthread_mutex_lock(&epoch_mx);
    compute_epoch++;
    pthread_mutex_unlock(&epoch_mx);
}
#endif

void pulp_count_macs(uint64_t macs) {
    stats.macs[t_core_id] += macs;
    advance_epoch();
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* DMA                                                                                                               */

typedef struct {
    pulp_dma_id id; /* 0 = free slot */
    uint8_t *dst;
    const uint8_t *src;
    uint32_t row_bytes, rows, planes;
    uint32_t dst_row_stride, src_row_stride, dst_plane_stride, src_plane_stride;
    int src_level, dst_level;
    uint64_t epoch;   /* compute epoch at the start */
    uint64_t done_ns; /* L3 engine with a bandwidth: when the transfer is complete (CLOCK_MONOTONIC) */
} dma_request;

/* Two engines, each with its own table of transfers in flight and its own ids: the cluster DMA (L1 <-> L2) and the
 * L3 controller (every transfer from or to L3), whose ids carry PULP_L3_DMA_ID_BIT. */
typedef struct {
    dma_request table[PULP_DMA_MAX_IN_FLIGHT];
    uint32_t in_flight;
    uint32_t next; /* next id (without the engine bit) */
    uint64_t free_ns; /* L3 engine: when the last transfer queued on it completes (transfers run one after another) */
} dma_engine;

static dma_engine engines[2];
static pthread_mutex_t dma_mx = PTHREAD_MUTEX_INITIALIZER;
static double l3_bytes_per_ns, l3_latency_ns; /* PULP_EMULATOR_L3_BYTES_PER_US / _LATENCY_US; 0: no delay */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until_ns(uint64_t when) {
    for (uint64_t now = now_ns(); now < when; now = now_ns()) {
        uint64_t left = when - now;
        struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        nanosleep(&ts, NULL);
    }
}

static double env_number(const char *name) {
    const char *text = getenv(name);
    if (text == NULL || *text == '\0') return 0.0;
    char *end = NULL;
    double value = strtod(text, &end);
    return end != text && value > 0.0 ? value : 0.0;
}

static uint64_t extent(uint32_t row_bytes, uint32_t rows, uint32_t planes, uint32_t row_stride, uint32_t plane_stride) {
    if (row_bytes == 0 || rows == 0 || planes == 0) return 0;
    return (uint64_t)(planes - 1u) * plane_stride + (uint64_t)(rows - 1u) * row_stride + row_bytes;
}

static int checked_level(const char *what, const void *p, uint64_t span) {
    int l = level_of(p, span);
    if (l < 0) {
        fprintf(stderr, "pulp emulator: DMA %s %p (%" PRIu64 " bytes) is outside the cluster memories\n", what, p,
                span);
        fatal(PULP_EXIT_DMA_RANGE, "");
    }
    return l;
}

pulp_dma_id pulp_dma_start_3d(void *dst, const void *src, uint32_t row_bytes, uint32_t rows, uint32_t planes,
                              uint32_t dst_row_stride, uint32_t src_row_stride, uint32_t dst_plane_stride,
                              uint32_t src_plane_stride) {
    dma_request r;
    r.dst = (uint8_t *)dst;
    r.src = (const uint8_t *)src;
    r.row_bytes = row_bytes;
    r.rows = rows;
    r.planes = planes;
    r.dst_row_stride = dst_row_stride;
    r.src_row_stride = src_row_stride;
    r.dst_plane_stride = dst_plane_stride;
    r.src_plane_stride = src_plane_stride;
    r.dst_level = checked_level("destination", dst, extent(row_bytes, rows, planes, dst_row_stride, dst_plane_stride));
    r.src_level = checked_level("source", src, extent(row_bytes, rows, planes, src_row_stride, src_plane_stride));
    r.epoch = current_epoch();
    r.done_ns = 0;
    int l3 = r.src_level == PULP_L3 || r.dst_level == PULP_L3;
    dma_engine *engine = &engines[l3];

    pthread_mutex_lock(&dma_mx);
    if (engine->in_flight >= PULP_DMA_MAX_IN_FLIGHT) {
        fprintf(stderr, "pulp emulator: more than %d %s transfers in flight (missing pulp_dma_wait?)\n",
                PULP_DMA_MAX_IN_FLIGHT, l3 ? "L3" : "DMA");
        fatal(PULP_EXIT_DMA_TABLE, "");
    }
    /* Ids increase; skip those whose slot is still taken (and 0, after wrapping around). */
    while ((engine->next & ~PULP_L3_DMA_ID_BIT) == 0 ||
           engine->table[engine->next % PULP_DMA_MAX_IN_FLIGHT].id != 0)
        engine->next = (engine->next + 1u) & ~PULP_L3_DMA_ID_BIT;
    r.id = engine->next | (l3 ? PULP_L3_DMA_ID_BIT : 0u);
    engine->next = (engine->next + 1u) & ~PULP_L3_DMA_ID_BIT;
    if (l3 && l3_bytes_per_ns > 0.0) {
        /* The L3 engine moves one transfer after another at its bandwidth, in the background. */
        uint64_t now = now_ns(), begin = engine->free_ns > now ? engine->free_ns : now;
        double bytes = (double)row_bytes * rows * planes;
        engine->free_ns = begin + (uint64_t)(l3_latency_ns + bytes / l3_bytes_per_ns);
        r.done_ns = engine->free_ns;
    }
    engine->table[r.id % PULP_DMA_MAX_IN_FLIGHT] = r;
    engine->in_flight++;
    pthread_mutex_unlock(&dma_mx);

    /* Until the wait the destination holds garbage (and, under ASan, may not be touched at all). */
    if (row_bytes != 0) {
        for (uint32_t p = 0; p < planes; ++p)
            for (uint32_t q = 0; q < rows; ++q) {
                uint8_t *row = r.dst + (size_t)p * dst_plane_stride + (size_t)q * dst_row_stride;
                memset(row, PULP_POISON_BYTE, row_bytes);
                PULP_POISON(row, row_bytes);
            }
    }
    return r.id;
}

pulp_dma_id pulp_dma_start_2d(void *dst, const void *src, uint32_t row_bytes, uint32_t rows, uint32_t dst_row_stride,
                              uint32_t src_row_stride) {
    return pulp_dma_start_3d(dst, src, row_bytes, rows, 1, dst_row_stride, src_row_stride, 0, 0);
}

pulp_dma_id pulp_dma_start_1d(void *dst, const void *src, uint32_t bytes) {
    return pulp_dma_start_3d(dst, src, bytes, 1, 1, 0, 0, 0, 0);
}

void pulp_dma_wait(pulp_dma_id id) {
    pthread_mutex_lock(&dma_mx);
    dma_engine *engine = &engines[(id & PULP_L3_DMA_ID_BIT) != 0];
    dma_request *slot = &engine->table[id % PULP_DMA_MAX_IN_FLIGHT];
    if (id == 0 || slot->id != id) {
        fprintf(stderr, "pulp emulator: wait on DMA id %" PRIu32 " that is not in flight\n", id);
        fatal(PULP_EXIT_BAD_WAIT, "");
    }
    dma_request r = *slot;
    slot->id = 0;
    engine->in_flight--;
    pthread_mutex_unlock(&dma_mx);
    if (r.done_ns != 0) sleep_until_ns(r.done_ns);
    int overlapped = current_epoch() != r.epoch;

    if (r.row_bytes != 0) {
        for (uint32_t p = 0; p < r.planes; ++p)
            for (uint32_t q = 0; q < r.rows; ++q) {
                uint8_t *d = r.dst + (size_t)p * r.dst_plane_stride + (size_t)q * r.dst_row_stride;
                const uint8_t *s = r.src + (size_t)p * r.src_plane_stride + (size_t)q * r.src_row_stride;
                PULP_UNPOISON(d, r.row_bytes);
                memcpy(d, s, r.row_bytes);
            }
    }
    pthread_mutex_lock(&stats_mx);
    stats.dma_bytes[r.src_level][r.dst_level] += (uint64_t)r.row_bytes * r.rows * r.planes;
    stats.dma_transfers[r.src_level][r.dst_level]++;
    if (overlapped) stats.dma_overlapped_bytes[r.src_level][r.dst_level] += (uint64_t)r.row_bytes * r.rows * r.planes;
    pthread_mutex_unlock(&stats_mx);
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* Init / shutdown / statistics                                                                                      */

void pulp_shutdown(void) {
    if (!initialised) return;
    pthread_mutex_lock(&dma_mx);
    memset(engines, 0, sizeof engines);
    pthread_mutex_unlock(&dma_mx);
    for (int l = 0; l < PULP_LEVELS; ++l) unmap_level(&levels[l]);
    memset(&current, 0, sizeof current);
    initialised = 0;
}

/* PULP_EMULATOR_STATS=FILE: the statistics are written to FILE (one JSON line) when the program exits, so a test
 * harness that knows nothing of the emulator still reports them. */
static void write_stats_file(void) {
    const char *path = getenv("PULP_EMULATOR_STATS");
    if (path == NULL || *path == '\0') return;
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "pulp emulator: cannot write statistics to %s\n", path);
        return;
    }
    pulp_print_stats(f);
    fclose(f);
}

int pulp_init(const pulp_config *config) {
    static int stats_at_exit = 0;
    if (!stats_at_exit && getenv("PULP_EMULATOR_STATS") != NULL) {
        stats_at_exit = 1;
        atexit(write_stats_file);
    }
    if (config == NULL || config->cores < 1 || config->cores > PULP_MAX_CORES) return -1;
    if (initialised) {
        if (config->l1_bytes == current.l1_bytes && config->l2_bytes == current.l2_bytes &&
            config->l3_bytes == current.l3_bytes && config->cores == current.cores)
            return 0;
        pulp_shutdown();
    }
    const uint32_t sizes[PULP_LEVELS] = {config->l1_bytes, config->l2_bytes, config->l3_bytes};
    for (int l = 0; l < PULP_LEVELS; ++l) {
        if (map_level(&levels[l], sizes[l]) != 0) {
            for (int k = 0; k < l; ++k) unmap_level(&levels[k]);
            memset(&levels[l], 0, sizeof levels[l]);
            return -1;
        }
    }
    current = *config;
    initialised = 1;
    l3_bytes_per_ns = env_number("PULP_EMULATOR_L3_BYTES_PER_US") / 1000.0;
    l3_latency_ns = env_number("PULP_EMULATOR_L3_LATENCY_US") * 1000.0;
    pulp_reset_stats();
    install_handler();
    return 0;
}

void pulp_get_stats(pulp_stats *out) {
    pthread_mutex_lock(&stats_mx);
    pthread_mutex_lock(&bar_mx);
    *out = stats;
    pthread_mutex_unlock(&bar_mx);
    pthread_mutex_unlock(&stats_mx);
}

void pulp_reset_stats(void) {
    pthread_mutex_lock(&stats_mx);
    pthread_mutex_lock(&bar_mx);
    memset(&stats, 0, sizeof stats);
    pthread_mutex_unlock(&bar_mx);
    pthread_mutex_unlock(&stats_mx);
}

static void print_pairs(FILE *f, const uint64_t table[PULP_LEVELS][PULP_LEVELS]) {
    const char *sep = "";
    fputc('{', f);
    for (int s = 0; s < PULP_LEVELS; ++s)
        for (int d = 0; d < PULP_LEVELS; ++d)
            if (table[s][d] != 0) {
                fprintf(f, "%s\"%s->%s\": %" PRIu64, sep, level_names[s], level_names[d], table[s][d]);
                sep = ", ";
            }
    fputc('}', f);
}

void pulp_print_stats(FILE *f) {
    pulp_stats s;
    pulp_get_stats(&s);
    uint32_t cores = current.cores ? current.cores : 1u;
    fputs("{\"dma_bytes\": ", f);
    print_pairs(f, (const uint64_t(*)[PULP_LEVELS])s.dma_bytes);
    fputs(", \"dma_transfers\": ", f);
    print_pairs(f, (const uint64_t(*)[PULP_LEVELS])s.dma_transfers);
    fputs(", \"dma_overlapped_bytes\": ", f);
    print_pairs(f, (const uint64_t(*)[PULP_LEVELS])s.dma_overlapped_bytes);
    fputs(", \"macs\": [", f);
    for (uint32_t c = 0; c < cores; ++c) fprintf(f, "%s%" PRIu64, c ? ", " : "", s.macs[c]);
    fprintf(f, "], \"barrier_waits\": %" PRIu64 ", \"forks\": %" PRIu64 "}\n", s.barrier_waits, s.forks);
    fflush(f);
}
