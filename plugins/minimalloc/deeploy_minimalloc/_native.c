/*
 * The MiniMalloc search core in C: the same search as python_search.py, node
 * for node, without the interpreter's cost per step.
 *
 * Why C: the search visits up to millions of nodes and each one touches tens
 * of buffers and sections; in CPython that is two orders of magnitude slower
 * than the published C++ solver.  Everything that is not the hot loop (the
 * sweep, option handling, minimisation) stays in Python and is shared by both
 * backends, so this file only receives flat integer arrays.
 *
 * Memory: all per-node arrays come from a chunked stack arena that is
 * released on the way back; every state change is recorded on a trail of old
 * values and undone in reverse order, so nothing is copied per node.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FOUND = 0, INFEASIBLE = 1, BUDGET = 2, TIME_LIMIT = 3, FAILED = 4 };

#define UNPLACED (-1)
#define NO_MIN INT64_MAX
#define DEADLINE_CHECK_MASK 1023
#define SIGNAL_CHECK_MASK 65535
#define MAX_HEURISTIC 32

/* ---------------------------------------------------------------- arena -- */

typedef struct Chunk {
    struct Chunk *prev;
    size_t capacity;
    size_t used;
    max_align_t data[];
} Chunk;

typedef struct {
    Chunk *top;
    Chunk *spare; /* one released chunk kept to avoid malloc/free ping-pong */
} Arena;

typedef struct {
    Chunk *chunk;
    size_t used;
} Mark;

#define CHUNK_BYTES ((size_t)1 << 20)

static void *arena_alloc(Arena *arena, size_t bytes) {
    bytes = (bytes + 15u) & ~(size_t)15u;
    if (bytes == 0) bytes = 16;
    if (arena->top == NULL || arena->top->used + bytes > arena->top->capacity) {
        Chunk *chunk = NULL;
        if (arena->spare != NULL && arena->spare->capacity >= bytes) {
            chunk = arena->spare;
            arena->spare = NULL;
        } else {
            size_t capacity = bytes > CHUNK_BYTES ? bytes : CHUNK_BYTES;
            chunk = (Chunk *)malloc(sizeof(Chunk) + capacity);
            if (chunk == NULL) return NULL;
            chunk->capacity = capacity;
        }
        chunk->used = 0;
        chunk->prev = arena->top;
        arena->top = chunk;
    }
    void *memory = (char *)arena->top->data + arena->top->used;
    arena->top->used += bytes;
    return memory;
}

static Mark arena_mark(const Arena *arena) {
    Mark mark = {arena->top, arena->top ? arena->top->used : 0};
    return mark;
}

static void arena_release(Arena *arena, Mark mark) {
    while (arena->top != mark.chunk) {
        Chunk *chunk = arena->top;
        arena->top = chunk->prev;
        if (arena->spare == NULL) {
            arena->spare = chunk;
        } else {
            free(chunk);
        }
    }
    if (arena->top != NULL) arena->top->used = mark.used;
}

static void arena_free(Arena *arena) {
    arena_release(arena, (Mark){NULL, 0});
    free(arena->spare);
    arena->spare = NULL;
}

/* ---------------------------------------------------------------- trail -- */

typedef struct {
    int32_t index;
    int64_t old;
} Change;

typedef struct {
    Change *items;
    size_t length;
    size_t capacity;
} Trail;

/* Make room for `extra` more changes, so that pushing inside the search cannot fail half-way. */
static int trail_reserve(Trail *trail, size_t extra) {
    if (trail->length + extra <= trail->capacity) return 0;
    size_t capacity = trail->capacity ? trail->capacity : 4096;
    while (capacity < trail->length + extra) capacity *= 2;
    Change *items = (Change *)realloc(trail->items, capacity * sizeof(Change));
    if (items == NULL) return -1;
    trail->items = items;
    trail->capacity = capacity;
    return 0;
}

static void trail_push(Trail *trail, int32_t index, int64_t old) {
    trail->items[trail->length].index = index;
    trail->items[trail->length].old = old;
    trail->length++;
}

/* ---------------------------------------------------------------- state -- */

typedef struct {
    int64_t at;   /* lowest offset the buffer can take now */
    int32_t rank; /* its rank in the static preordering */
    int32_t buffer;
} Entry;

typedef struct {
    const int32_t *buffers;
    int32_t count;
    int32_t lower; /* section range [lower, upper) */
    int32_t upper;
} Part;

typedef struct {
    /* the instance (read only) */
    int32_t n, sections;
    int64_t *size, *lower, *upper;
    int32_t *sec_lo, *sec_hi;
    int32_t *ov_start, *ov;
    int32_t *mem_start, *mem;
    int32_t parts;
    int32_t *part_start, *part_buffers, *part_lo, *part_hi;
    int64_t capacity, alignment;
    /* static preordering keys, one array per letter */
    int64_t *key_area, *key_sections, *key_overlaps, *key_width;
    int64_t *key_total; /* scratch for the dynamic letter T */
    char heuristic[MAX_HEURISTIC + 1];
    /* search state */
    int64_t *offset, *solution, *min_offset;
    int64_t *floor, *total, *section_min;
    int32_t *cuts;
    /* scratch per section, back to NO_MIN / 0 after every placement */
    int64_t *left_old, *right_old;
    int32_t *cover; /* sections + 1 */
    /* Each section's members are kept with the unplaced ones first: live[s] of them.  slot[slot_start[b] + s -
     * sec_lo[b]] is where b sits in section s's member list.  Placing b swaps it behind the live ones; undoing is
     * just live[s]++ because undo happens in reverse order (the order among live members does not matter). */
    int32_t *live, *slot_start, *slot;
    Trail offset_trail, min_trail, floor_trail;
    Arena arena;
    /* budget */
    int64_t nodes_remaining, nodes, backtracks;
    int has_deadline;
    struct timespec deadline;
    int interrupted;
} Ctx;

static int64_t align_up(int64_t value, int64_t alignment) {
    int64_t rest = value % alignment;
    return rest ? value + alignment - rest : value;
}

static int deadline_passed(const Ctx *ctx) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec != ctx->deadline.tv_sec) return now.tv_sec > ctx->deadline.tv_sec;
    return now.tv_nsec > ctx->deadline.tv_nsec;
}

/* ------------------------------------------------------------- sorting -- */

static int entry_less(const Entry *a, const Entry *b) {
    if (a->at != b->at) return a->at < b->at;
    return a->rank < b->rank;
}

/* Stable merge sort of entries by (at, rank); the key is unique, so any sort gives the same order. */
static void sort_entries(Entry *items, Entry *scratch, int32_t count) {
    if (count < 24) {
        for (int32_t i = 1; i < count; i++) {
            Entry item = items[i];
            int32_t j = i - 1;
            while (j >= 0 && entry_less(&item, &items[j])) {
                items[j + 1] = items[j];
                j--;
            }
            items[j + 1] = item;
        }
        return;
    }
    int32_t half = count / 2;
    sort_entries(items, scratch, half);
    sort_entries(items + half, scratch, count - half);
    memcpy(scratch, items, (size_t)half * sizeof(Entry));
    int32_t i = 0, j = half, k = 0;
    while (i < half && j < count) items[k++] = entry_less(&items[j], &scratch[i]) ? items[j++] : scratch[i++];
    while (i < half) items[k++] = scratch[i++];
}

static int64_t preorder_key(const Ctx *ctx, char letter, int32_t b) {
    switch (letter) {
        case 'A': return ctx->key_area[b];
        case 'C': return ctx->key_sections[b];
        case 'L': return ctx->lower[b];
        case 'O': return ctx->key_overlaps[b];
        case 'T': return ctx->key_total[b];
        case 'U': return ctx->upper[b];
        case 'W': return ctx->key_width[b];
        case 'Z': return ctx->size[b];
        default: return 0;
    }
}

/* Whether buffer a ranks before buffer b: larger keys first, letter by letter, then the input order. */
static int preorder_before(const Ctx *ctx, int32_t a, int32_t b) {
    for (const char *letter = ctx->heuristic; *letter; letter++) {
        int64_t ka = preorder_key(ctx, *letter, a), kb = preorder_key(ctx, *letter, b);
        if (ka != kb) return ka > kb;
    }
    return a < b;
}

static void sort_preorder(const Ctx *ctx, int32_t *items, int32_t *scratch, int32_t count) {
    if (count < 24) {
        for (int32_t i = 1; i < count; i++) {
            int32_t item = items[i];
            int32_t j = i - 1;
            while (j >= 0 && preorder_before(ctx, item, items[j])) {
                items[j + 1] = items[j];
                j--;
            }
            items[j + 1] = item;
        }
        return;
    }
    int32_t half = count / 2;
    sort_preorder(ctx, items, scratch, half);
    sort_preorder(ctx, items + half, scratch, count - half);
    memcpy(scratch, items, (size_t)half * sizeof(int32_t));
    int32_t i = 0, j = half, k = 0;
    while (i < half && j < count) items[k++] = preorder_before(ctx, items[j], scratch[i]) ? items[j++] : scratch[i++];
    while (i < half) items[k++] = scratch[i++];
}

/* -------------------------------------------------------------- search -- */

static int search(Ctx *ctx, const Part *part, const Entry *previous, int32_t previous_count, int64_t lowest,
                  int32_t lowest_rank);

/* Lowest offset any unplaced buffer of section s can still take (NO_MIN when none is left). */
static int64_t scan_section_min(const Ctx *ctx, int32_t s) {
    int64_t lowest = NO_MIN;
    const int32_t *member = ctx->mem + ctx->mem_start[s];
    for (int32_t i = 0, live = ctx->live[s]; i < live; i++) {
        int64_t value = ctx->min_offset[member[i]];
        if (value < lowest) lowest = value;
    }
    return lowest;
}

/* Move b behind the live members of each of its sections. */
static void retire(Ctx *ctx, int32_t b) {
    int32_t *slot = ctx->slot + ctx->slot_start[b] - ctx->sec_lo[b];
    for (int32_t s = ctx->sec_lo[b]; s < ctx->sec_hi[b]; s++) {
        int32_t here = slot[s];
        int32_t last = ctx->mem_start[s] + --ctx->live[s];
        int32_t other = ctx->mem[last];
        ctx->mem[here] = other;
        ctx->mem[last] = b;
        ctx->slot[ctx->slot_start[other] + s - ctx->sec_lo[other]] = here;
        slot[s] = last;
    }
}

static void revive(Ctx *ctx, int32_t b) {
    for (int32_t s = ctx->sec_lo[b]; s < ctx->sec_hi[b]; s++) ctx->live[s]++;
}

static int sub_solve(Ctx *ctx, const Part *part) {
    Mark mark = arena_mark(&ctx->arena);
    int32_t count = part->count;
    int32_t *preorder = (int32_t *)arena_alloc(&ctx->arena, (size_t)count * sizeof(int32_t));
    int32_t *scratch = (int32_t *)arena_alloc(&ctx->arena, (size_t)count * sizeof(int32_t));
    Entry *ordering = (Entry *)arena_alloc(&ctx->arena, (size_t)count * sizeof(Entry));
    Entry *entry_scratch = (Entry *)arena_alloc(&ctx->arena, (size_t)count * sizeof(Entry));
    if (!preorder || !scratch || !ordering || !entry_scratch) {
        arena_release(&ctx->arena, mark);
        return FAILED;
    }
    int needs_total = strchr(ctx->heuristic, 'T') != NULL;
    for (int32_t i = 0; i < count; i++) {
        int32_t b = part->buffers[i];
        preorder[i] = b;
        if (needs_total) {
            int64_t largest = 0;
            for (int32_t s = ctx->sec_lo[b]; s < ctx->sec_hi[b]; s++)
                if (ctx->total[s] > largest) largest = ctx->total[s];
            ctx->key_total[b] = largest;
        }
    }
    sort_preorder(ctx, preorder, scratch, count);
    for (int32_t rank = 0; rank < count; rank++) {
        ordering[rank].at = ctx->min_offset[preorder[rank]];
        ordering[rank].rank = rank;
        ordering[rank].buffer = preorder[rank];
    }
    sort_entries(ordering, entry_scratch, count);
    int status = search(ctx, part, ordering, count, 0, 0);
    arena_release(&ctx->arena, mark);
    return status;
}

/* After b is placed at `at`: continue in this partition, or split it at every section boundary b was the last
 * unplaced buffer across, and solve the pieces one by one. */
static int decompose(Ctx *ctx, const Part *part, const Entry *ordering, int32_t count, int64_t at, int32_t rank,
                     int32_t b) {
    ctx->solution[b] = at;
    int32_t first = ctx->sec_lo[b], last = ctx->sec_hi[b] - 1;
    int32_t cutpoints = 0;
    for (int32_t s = first; s < last; s++)
        if (--ctx->cuts[s] == 0) cutpoints++;
    int status;
    if (cutpoints == 0) {
        status = search(ctx, part, ordering, count, at, rank);
    } else {
        Mark mark = arena_mark(&ctx->arena);
        int32_t *bounds = (int32_t *)arena_alloc(&ctx->arena, (size_t)(cutpoints + 2) * sizeof(int32_t));
        int32_t *inside = (int32_t *)arena_alloc(&ctx->arena, (size_t)part->count * sizeof(int32_t));
        if (!bounds || !inside) {
            status = FAILED;
        } else {
            int32_t nbounds = 0;
            bounds[nbounds++] = part->lower;
            for (int32_t s = first; s < last; s++)
                if (ctx->cuts[s] == 0) bounds[nbounds++] = s + 1;
            bounds[nbounds++] = part->upper;
            status = FOUND;
            for (int32_t k = 1; k < nbounds; k++) {
                int32_t sub_lower = bounds[k - 1], sub_upper = bounds[k];
                int32_t inside_count = 0;
                for (int32_t i = 0; i < part->count; i++) {
                    int32_t o = part->buffers[i];
                    if (ctx->offset[o] == UNPLACED && ctx->sec_lo[o] < sub_upper && sub_lower < ctx->sec_hi[o])
                        inside[inside_count++] = o;
                }
                if (inside_count == 0) continue;
                Part sub = {inside, inside_count, sub_lower, sub_upper};
                status = sub_solve(ctx, &sub);
                if (status != FOUND) break;
                /* `inside` is reused for the next piece: sub_solve released everything it allocated */
            }
        }
        arena_release(&ctx->arena, mark);
    }
    for (int32_t s = first; s < last; s++) ctx->cuts[s]++;
    return status;
}

/* Prefix and suffix maxima of the sections' totals and fills (floor + total) over a partition, built once per node
 * (placements undo themselves, so the node's state is the same for every candidate).  They answer "does any
 * section outside b's own ones overflow?" in constant time per candidate. */
typedef struct {
    int ready;
    int64_t *total_prefix, *total_suffix, *fill_prefix, *fill_suffix;
} Envelope;

static int envelope_build(Ctx *ctx, const Part *part, Envelope *envelope) {
    int32_t width = part->upper - part->lower;
    size_t bytes = (size_t)(width + 1) * sizeof(int64_t);
    envelope->total_prefix = (int64_t *)arena_alloc(&ctx->arena, bytes);
    envelope->total_suffix = (int64_t *)arena_alloc(&ctx->arena, bytes);
    envelope->fill_prefix = (int64_t *)arena_alloc(&ctx->arena, bytes);
    envelope->fill_suffix = (int64_t *)arena_alloc(&ctx->arena, bytes);
    if (!envelope->total_prefix || !envelope->total_suffix || !envelope->fill_prefix || !envelope->fill_suffix)
        return -1;
    const int64_t *total = ctx->total + part->lower, *floor = ctx->floor + part->lower;
    envelope->total_prefix[0] = envelope->fill_prefix[0] = INT64_MIN;
    for (int32_t i = 0; i < width; i++) {
        int64_t fill = floor[i] + total[i];
        envelope->total_prefix[i + 1] = total[i] > envelope->total_prefix[i] ? total[i] : envelope->total_prefix[i];
        envelope->fill_prefix[i + 1] = fill > envelope->fill_prefix[i] ? fill : envelope->fill_prefix[i];
    }
    envelope->total_suffix[width] = envelope->fill_suffix[width] = INT64_MIN;
    for (int32_t i = width - 1; i >= 0; i--) {
        int64_t fill = floor[i] + total[i];
        envelope->total_suffix[i] = total[i] > envelope->total_suffix[i + 1] ? total[i] : envelope->total_suffix[i + 1];
        envelope->fill_suffix[i] = fill > envelope->fill_suffix[i + 1] ? fill : envelope->fill_suffix[i + 1];
    }
    envelope->ready = 1;
    return 0;
}

/* Whether every section of the partition can still hold its unplaced sizes above max(floor, at), with b counted as
 * placed but before any floor is raised.  Floors only rise and totals only fall in b's sections, so this is
 * necessary for the check after propagation; sections it passes and propagation leaves alone need no recheck. */
static int fits_before_propagation(const Ctx *ctx, const Part *part, const Envelope *envelope, int64_t at,
                                   int32_t b) {
    const int64_t capacity = ctx->capacity, room = capacity - at, size = ctx->size[b];
    const int32_t first = ctx->sec_lo[b], end = ctx->sec_hi[b];
    const int32_t before = first - part->lower, after = end - part->lower;
    int64_t outside = envelope->total_prefix[before] > envelope->total_suffix[after] ? envelope->total_prefix[before]
                                                                                     : envelope->total_suffix[after];
    if (outside > room) return 0;
    outside = envelope->fill_prefix[before] > envelope->fill_suffix[after] ? envelope->fill_prefix[before]
                                                                           : envelope->fill_suffix[after];
    if (outside > capacity) return 0;
    for (int32_t s = first; s < end; s++) {
        int64_t rest = ctx->total[s] - size;
        if (rest > room || ctx->floor[s] + rest > capacity) return 0;
    }
    return 1;
}

/* A section outside b's range holding a raised buffer: refresh its minimum if a raised buffer held it, then lift its
 * floor to the minimum. */
static void raise_section(Ctx *ctx, int32_t s, int rescan) {
    if (rescan) {
        int64_t lowest = scan_section_min(ctx, s);
        if (lowest != ctx->section_min[s]) {
            trail_push(&ctx->min_trail, s, ctx->section_min[s]);
            ctx->section_min[s] = lowest;
        }
    }
    if (ctx->floor[s] < ctx->section_min[s]) {
        trail_push(&ctx->floor_trail, s, ctx->floor[s]);
        ctx->floor[s] = ctx->section_min[s];
    }
}

/* Place b at `at`, propagate to the buffers and sections it touches, check, recurse, undo. */
static int place(Ctx *ctx, const Part *part, const Entry *ordering, int32_t count, int64_t at, int32_t rank,
                 int32_t b, int *hatless) {
    const int64_t size = ctx->size[b];
    const int64_t height = at + size;
    const int64_t raised = align_up(height, ctx->alignment);
    const int32_t first = ctx->sec_lo[b], end = ctx->sec_hi[b];
    /* Each section is recorded at most once per trail below. */
    if (trail_reserve(&ctx->offset_trail, (size_t)(ctx->ov_start[b + 1] - ctx->ov_start[b])) ||
        trail_reserve(&ctx->min_trail, (size_t)ctx->sections) ||
        trail_reserve(&ctx->floor_trail, (size_t)ctx->sections))
        return FAILED;
    const size_t offset_mark = ctx->offset_trail.length;
    const size_t min_mark = ctx->min_trail.length;
    const size_t floor_mark = ctx->floor_trail.length;
    int status = INFEASIBLE;
    *hatless = 1;
    ctx->offset[b] = at;

    /* 1. Every unplaced buffer overlapping b now starts at or above its top. */
    for (int32_t i = ctx->ov_start[b]; i < ctx->ov_start[b + 1]; i++) {
        int32_t o = ctx->ov[i];
        if (ctx->offset[o] != UNPLACED) continue;
        *hatless = 0;
        if (ctx->min_offset[o] >= height) continue;
        trail_push(&ctx->offset_trail, o, ctx->min_offset[o]);
        ctx->min_offset[o] = raised;
    }
    const size_t raised_end = ctx->offset_trail.length;
    retire(ctx, b);

    /* 2+3. Section minima and floors.  A section's minimum (lowest offset of an unplaced member) can only rise
     * where b left (b's own sections) or where a raised buffer held it; a section's floor is b's top in b's
     * sections and, in every section holding a raised buffer, at least its minimum.
     *
     * Every raised buffer overlaps b, so its section range meets b's: to the left of b's range the raised ones
     * cover one contiguous zone [left, first), to the right [end, right), and whether a section there held its
     * minimum through a raised buffer depends only on the smallest old offset among the raised buffers covering
     * it, a running minimum over their left (right) ends.  This visits each section once instead of every
     * (raised buffer, section) pair. */
    int32_t left = first, right = end;
    int64_t *left_old = ctx->left_old, *right_old = ctx->right_old;
    int32_t *cover = ctx->cover;
    for (size_t t = offset_mark; t < raised_end; t++) {
        int32_t o = ctx->offset_trail.items[t].index;
        int64_t old = ctx->offset_trail.items[t].old;
        int32_t lo = ctx->sec_lo[o], hi = ctx->sec_hi[o];
        if (lo < first) {
            if (old < left_old[lo]) left_old[lo] = old;
            if (lo < left) left = lo;
        }
        if (hi > end) {
            if (old < right_old[hi - 1]) right_old[hi - 1] = old;
            if (hi > right) right = hi;
        }
        cover[lo > first ? lo : first]++;
        cover[hi < end ? hi : end]--;
    }
    int64_t smallest_old = NO_MIN;
    for (int32_t s = left; s < first; s++) {
        if (left_old[s] < smallest_old) smallest_old = left_old[s];
        left_old[s] = NO_MIN;
        raise_section(ctx, s, smallest_old == ctx->section_min[s]);
    }
    smallest_old = NO_MIN;
    for (int32_t s = right - 1; s >= end; s--) {
        if (right_old[s] < smallest_old) smallest_old = right_old[s];
        right_old[s] = NO_MIN;
        raise_section(ctx, s, smallest_old == ctx->section_min[s]);
    }
    int32_t covering = 0;
    for (int32_t s = first; s < end; s++) {
        covering += cover[s];
        cover[s] = 0;
        int64_t lowest = scan_section_min(ctx, s);
        if (lowest != ctx->section_min[s]) {
            trail_push(&ctx->min_trail, s, ctx->section_min[s]);
            ctx->section_min[s] = lowest;
        }
        trail_push(&ctx->floor_trail, s, ctx->floor[s]);
        ctx->floor[s] = covering > 0 && lowest > height ? lowest : height;
        ctx->total[s] -= size;
    }
    cover[end] = 0;

    /* 4. Spatial inference: in every section of the partition, what is still unplaced must fit above its floor
     * (and above `at`: canonical placements never go down).  The caller checked every section with the floors
     * before propagation; only the sections recorded on the floor trail (b's and the raised ones) changed. */
    int fits = 1;
    const int64_t capacity = ctx->capacity;
    for (size_t t = floor_mark; t < ctx->floor_trail.length; t++) {
        int32_t s = ctx->floor_trail.items[t].index;
        int64_t level = ctx->floor[s] > at ? ctx->floor[s] : at;
        if (level + ctx->total[s] > capacity) {
            fits = 0;
            break;
        }
    }
    if (fits) status = decompose(ctx, part, ordering, count, at, rank, b);

    /* Undo, newest first. */
    for (int32_t s = first; s < end; s++) ctx->total[s] += size;
    while (ctx->floor_trail.length > floor_mark) {
        Change *change = &ctx->floor_trail.items[--ctx->floor_trail.length];
        ctx->floor[change->index] = change->old;
    }
    while (ctx->min_trail.length > min_mark) {
        Change *change = &ctx->min_trail.items[--ctx->min_trail.length];
        ctx->section_min[change->index] = change->old;
    }
    while (ctx->offset_trail.length > offset_mark) {
        Change *change = &ctx->offset_trail.items[--ctx->offset_trail.length];
        ctx->min_offset[change->index] = change->old;
    }
    revive(ctx, b);
    ctx->offset[b] = UNPLACED;
    return status;
}

static int search(Ctx *ctx, const Part *part, const Entry *previous, int32_t previous_count, int64_t lowest,
                  int32_t lowest_rank) {
    if (ctx->nodes_remaining <= 0) return BUDGET;
    ctx->nodes_remaining--;
    ctx->nodes++;
    if ((ctx->nodes & DEADLINE_CHECK_MASK) == 0) {
        if (ctx->has_deadline && deadline_passed(ctx)) return TIME_LIMIT;
        if ((ctx->nodes & SIGNAL_CHECK_MASK) == 0 && PyErr_CheckSignals() != 0) {
            ctx->interrupted = 1;
            return FAILED;
        }
    }
    Mark mark = arena_mark(&ctx->arena);
    Entry *ordering = (Entry *)arena_alloc(&ctx->arena, (size_t)previous_count * sizeof(Entry));
    Entry *moved = (Entry *)arena_alloc(&ctx->arena, (size_t)previous_count * sizeof(Entry));
    Entry *scratch = (Entry *)arena_alloc(&ctx->arena, (size_t)previous_count * sizeof(Entry));
    if (!ordering || !moved || !scratch) {
        arena_release(&ctx->arena, mark);
        return FAILED;
    }
    /* The candidates: unplaced buffers by lowest possible offset, then rank.  Entries whose offset did not move
     * keep their order; the moved ones are sorted apart and merged in. */
    int32_t kept = 0, moved_count = 0;
    for (int32_t i = 0; i < previous_count; i++) {
        int32_t b = previous[i].buffer;
        if (ctx->offset[b] != UNPLACED) continue;
        if (ctx->min_offset[b] == previous[i].at) {
            scratch[kept++] = previous[i];
        } else {
            moved[moved_count].at = ctx->min_offset[b];
            moved[moved_count].rank = previous[i].rank;
            moved[moved_count].buffer = b;
            moved_count++;
        }
    }
    int32_t count = kept + moved_count;
    if (count == 0) {
        arena_release(&ctx->arena, mark);
        return FOUND;
    }
    if (moved_count > 1) sort_entries(moved, ordering, moved_count);
    {
        int32_t i = 0, j = 0, k = 0;
        while (i < kept && j < moved_count) ordering[k++] = entry_less(&moved[j], &scratch[i]) ? moved[j++] : scratch[i++];
        while (i < kept) ordering[k++] = scratch[i++];
        while (j < moved_count) ordering[k++] = moved[j++];
    }
    int64_t min_height = INT64_MAX;
    for (int32_t i = 0; i < count; i++) {
        int64_t top = ordering[i].at + ctx->size[ordering[i].buffer];
        if (top < min_height) min_height = top;
    }
    int status = INFEASIBLE;
    Envelope envelope = {0, NULL, NULL, NULL, NULL};
    for (int32_t i = 0; i < count; i++) {
        int64_t at = ordering[i].at;
        int32_t rank = ordering[i].rank;
        int32_t b = ordering[i].buffer;
        if (at < lowest || (at == lowest && rank < lowest_rank)) continue;
        if (at >= min_height) break; /* dominated, and so is every later entry */
        if (!envelope.ready && envelope_build(ctx, part, &envelope)) {
            status = FAILED;
            break;
        }
        int hatless = 1;
        if (fits_before_propagation(ctx, part, &envelope, at, b)) {
            status = place(ctx, part, ordering, count, at, rank, b, &hatless);
            if (status != INFEASIBLE) break;
        } else {
            for (int32_t k = ctx->ov_start[b]; k < ctx->ov_start[b + 1]; k++) {
                if (ctx->offset[ctx->ov[k]] == UNPLACED) {
                    hatless = 0;
                    break;
                }
            }
        }
        if (hatless) break;
    }
    if (status == INFEASIBLE) ctx->backtracks++;
    arena_release(&ctx->arena, mark);
    return status;
}

static int solve_partitions(Ctx *ctx) {
    for (int32_t p = 0; p < ctx->parts; p++) {
        Part part = {ctx->part_buffers + ctx->part_start[p], ctx->part_start[p + 1] - ctx->part_start[p],
                     ctx->part_lo[p], ctx->part_hi[p]};
        int status = sub_solve(ctx, &part);
        if (status != FOUND) return status;
    }
    return FOUND;
}

/* One heuristic: a single unbounded run (or bounded by node_limit).  Several: round robin, budgets doubling. */
static int round_robin(Ctx *ctx, PyObject *heuristics, int64_t node_limit, Py_ssize_t *winner) {
    Py_ssize_t count = PyTuple_GET_SIZE(heuristics);
    *winner = -1;
    if (count == 1) {
        strcpy(ctx->heuristic, PyUnicode_AsUTF8(PyTuple_GET_ITEM(heuristics, 0)));
        ctx->nodes_remaining = node_limit >= 0 ? node_limit : INT64_MAX;
        int status = solve_partitions(ctx);
        if (status == FOUND) *winner = 0;
        return status;
    }
    int64_t limit = ctx->n;
    for (;;) {
        limit = limit > INT64_MAX / 2 ? INT64_MAX : 2 * limit;
        int last_round = node_limit >= 0 && limit >= node_limit;
        if (last_round) limit = node_limit;
        for (Py_ssize_t h = 0; h < count; h++) {
            strcpy(ctx->heuristic, PyUnicode_AsUTF8(PyTuple_GET_ITEM(heuristics, h)));
            ctx->nodes_remaining = limit;
            int status = solve_partitions(ctx);
            if (status == FOUND) *winner = h;
            if (status != BUDGET) return status;
        }
        if (last_round) return BUDGET;
    }
}

/* ------------------------------------------------------------ bindings -- */

/* A Python sequence of ints as a freshly allocated int64 array of exactly `expected` items (-1: any length). */
static int64_t *to_int64(PyObject *sequence, Py_ssize_t expected, Py_ssize_t *length, const char *what) {
    PyObject *fast = PySequence_Fast(sequence, what);
    if (fast == NULL) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    if (expected >= 0 && count != expected) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items, got %zd", what, expected, count);
        Py_DECREF(fast);
        return NULL;
    }
    int64_t *items = (int64_t *)malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    if (items == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        long long value = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (value == -1 && PyErr_Occurred()) {
            free(items);
            Py_DECREF(fast);
            return NULL;
        }
        items[i] = (int64_t)value;
    }
    Py_DECREF(fast);
    if (length) *length = count;
    return items;
}

static int32_t *to_int32(PyObject *sequence, Py_ssize_t expected, Py_ssize_t *length, const char *what) {
    Py_ssize_t count = 0;
    int64_t *wide = to_int64(sequence, expected, &count, what);
    if (wide == NULL) return NULL;
    int32_t *items = (int32_t *)malloc((size_t)(count ? count : 1) * sizeof(int32_t));
    if (items == NULL) {
        free(wide);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (wide[i] < INT32_MIN || wide[i] > INT32_MAX) {
            PyErr_Format(PyExc_OverflowError, "%s: index out of range", what);
            free(wide);
            free(items);
            return NULL;
        }
        items[i] = (int32_t)wide[i];
    }
    free(wide);
    if (length) *length = count;
    return items;
}

static void ctx_free(Ctx *ctx) {
    void *arrays[] = {ctx->size, ctx->lower, ctx->upper, ctx->sec_lo, ctx->sec_hi, ctx->ov_start, ctx->ov,
                      ctx->mem_start, ctx->mem, ctx->part_start, ctx->part_buffers, ctx->part_lo, ctx->part_hi,
                      ctx->key_area, ctx->key_sections, ctx->key_overlaps, ctx->key_width, ctx->key_total,
                      ctx->offset, ctx->solution, ctx->min_offset, ctx->floor, ctx->total, ctx->section_min,
                      ctx->cuts, ctx->left_old, ctx->right_old, ctx->cover, ctx->live, ctx->slot_start, ctx->slot, ctx->offset_trail.items, ctx->min_trail.items, ctx->floor_trail.items};
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) free(arrays[i]);
    arena_free(&ctx->arena);
}

/* Check the CSR and range arrays so that a caller's mistake raises instead of reading out of bounds. */
static int validate(const Ctx *ctx, Py_ssize_t ov_length, Py_ssize_t mem_length, Py_ssize_t part_length) {
    int32_t n = ctx->n, sections = ctx->sections;
    if (ctx->ov_start[0] != 0 || ctx->ov_start[n] != ov_length) return 0;
    if (ctx->mem_start[0] != 0 || ctx->mem_start[sections] != mem_length) return 0;
    if (ctx->part_start[0] != 0 || ctx->part_start[ctx->parts] != part_length) return 0;
    for (int32_t b = 0; b < n; b++) {
        if (ctx->ov_start[b] > ctx->ov_start[b + 1]) return 0;
        if (ctx->sec_lo[b] < 0 || ctx->sec_lo[b] >= ctx->sec_hi[b] || ctx->sec_hi[b] > sections) return 0;
        if (ctx->size[b] <= 0) return 0;
    }
    for (Py_ssize_t i = 0; i < ov_length; i++)
        if (ctx->ov[i] < 0 || ctx->ov[i] >= n) return 0;
    for (int32_t s = 0; s < sections; s++)
        if (ctx->mem_start[s] > ctx->mem_start[s + 1]) return 0;
    for (Py_ssize_t i = 0; i < mem_length; i++)
        if (ctx->mem[i] < 0 || ctx->mem[i] >= n) return 0;
    for (int32_t p = 0; p < ctx->parts; p++) {
        if (ctx->part_start[p] > ctx->part_start[p + 1]) return 0;
        if (ctx->part_lo[p] < 0 || ctx->part_lo[p] > ctx->part_hi[p] || ctx->part_hi[p] > sections) return 0;
    }
    for (Py_ssize_t i = 0; i < part_length; i++)
        if (ctx->part_buffers[i] < 0 || ctx->part_buffers[i] >= n) return 0;
    return 1;
}

/* Fill the member slots; fails unless every buffer is a member of exactly the sections in its range, once. */
static int index_members(Ctx *ctx, Py_ssize_t mem_length) {
    int32_t n = ctx->n, sections = ctx->sections;
    ctx->slot_start = (int32_t *)malloc((size_t)(n + 1) * sizeof(int32_t));
    ctx->live = (int32_t *)malloc((size_t)(sections ? sections : 1) * sizeof(int32_t));
    if (!ctx->slot_start || !ctx->live) return -1;
    ctx->slot_start[0] = 0;
    for (int32_t b = 0; b < n; b++) ctx->slot_start[b + 1] = ctx->slot_start[b] + (ctx->sec_hi[b] - ctx->sec_lo[b]);
    if (ctx->slot_start[n] != mem_length) return 0;
    ctx->slot = (int32_t *)malloc((size_t)(mem_length ? mem_length : 1) * sizeof(int32_t));
    if (!ctx->slot) return -1;
    for (Py_ssize_t i = 0; i < mem_length; i++) ctx->slot[i] = -1;
    for (int32_t s = 0; s < sections; s++) {
        ctx->live[s] = ctx->mem_start[s + 1] - ctx->mem_start[s];
        for (int32_t i = ctx->mem_start[s]; i < ctx->mem_start[s + 1]; i++) {
            int32_t b = ctx->mem[i];
            if (s < ctx->sec_lo[b] || s >= ctx->sec_hi[b]) return 0;
            int32_t *slot = &ctx->slot[ctx->slot_start[b] + s - ctx->sec_lo[b]];
            if (*slot != -1) return 0;
            *slot = i;
        }
    }
    return 1;
}

PyDoc_STRVAR(search_doc,
             "search(sizes, lowers, uppers, section_lower, section_upper, overlap_start, overlaps, member_start,\n"
             "       members, partition_start, partition_buffers, partition_lower, partition_upper, cuts,\n"
             "       capacity, alignment, heuristics, node_limit, time_limit)\n"
             "-> (status, offsets, nodes, backtracks, heuristic_index)\n\n"
             "The MiniMalloc search on a swept instance (flat arrays, see native_search.py).\n"
             "node_limit < 0 and time_limit < 0 mean none.");

static PyObject *native_search(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *o_size, *o_lower, *o_upper, *o_sec_lo, *o_sec_hi, *o_ov_start, *o_ov, *o_mem_start, *o_mem;
    PyObject *o_part_start, *o_part_buffers, *o_part_lo, *o_part_hi, *o_cuts, *heuristics;
    long long capacity, alignment, node_limit;
    double time_limit;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOLLO!Ld", &o_size, &o_lower, &o_upper, &o_sec_lo, &o_sec_hi,
                          &o_ov_start, &o_ov, &o_mem_start, &o_mem, &o_part_start, &o_part_buffers, &o_part_lo,
                          &o_part_hi, &o_cuts, &capacity, &alignment, &PyTuple_Type, &heuristics, &node_limit,
                          &time_limit))
        return NULL;
    Py_ssize_t hcount = PyTuple_GET_SIZE(heuristics);
    if (hcount < 1) {
        PyErr_SetString(PyExc_ValueError, "heuristics: at least one");
        return NULL;
    }
    for (Py_ssize_t h = 0; h < hcount; h++) {
        PyObject *item = PyTuple_GET_ITEM(heuristics, h);
        Py_ssize_t length;
        if (!PyUnicode_Check(item) || PyUnicode_AsUTF8AndSize(item, &length) == NULL || length < 1 ||
            length > MAX_HEURISTIC) {
            PyErr_SetString(PyExc_ValueError, "heuristics: non-empty strings of at most 32 letters");
            return NULL;
        }
    }
    if (alignment < 1) {
        PyErr_SetString(PyExc_ValueError, "alignment must be >= 1");
        return NULL;
    }

    Ctx ctx;
    memset(&ctx, 0, sizeof(ctx));
    Py_ssize_t n = 0, sections_plus_one = 0, ov_length = 0, mem_length = 0, parts_plus_one = 0, part_length = 0;
    Py_ssize_t parts = 0;
    PyObject *result = NULL;
    if (!(ctx.size = to_int64(o_size, -1, &n, "sizes"))) goto done;
    if (n > INT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "too many buffers");
        goto done;
    }
    ctx.n = (int32_t)n;
    if (!(ctx.lower = to_int64(o_lower, n, NULL, "lowers"))) goto done;
    if (!(ctx.upper = to_int64(o_upper, n, NULL, "uppers"))) goto done;
    if (!(ctx.sec_lo = to_int32(o_sec_lo, n, NULL, "section_lower"))) goto done;
    if (!(ctx.sec_hi = to_int32(o_sec_hi, n, NULL, "section_upper"))) goto done;
    if (!(ctx.ov_start = to_int32(o_ov_start, n + 1, NULL, "overlap_start"))) goto done;
    if (!(ctx.ov = to_int32(o_ov, -1, &ov_length, "overlaps"))) goto done;
    if (!(ctx.mem_start = to_int32(o_mem_start, -1, &sections_plus_one, "member_start"))) goto done;
    if (sections_plus_one < 1) {
        PyErr_SetString(PyExc_ValueError, "member_start: at least one item");
        goto done;
    }
    ctx.sections = (int32_t)(sections_plus_one - 1);
    if (!(ctx.mem = to_int32(o_mem, -1, &mem_length, "members"))) goto done;
    if (!(ctx.part_start = to_int32(o_part_start, -1, &parts_plus_one, "partition_start"))) goto done;
    if (parts_plus_one < 1) {
        PyErr_SetString(PyExc_ValueError, "partition_start: at least one item");
        goto done;
    }
    parts = parts_plus_one - 1;
    ctx.parts = (int32_t)parts;
    if (!(ctx.part_buffers = to_int32(o_part_buffers, -1, &part_length, "partition_buffers"))) goto done;
    if (!(ctx.part_lo = to_int32(o_part_lo, parts, NULL, "partition_lower"))) goto done;
    if (!(ctx.part_hi = to_int32(o_part_hi, parts, NULL, "partition_upper"))) goto done;
    if (!(ctx.cuts = to_int32(o_cuts, ctx.sections > 0 ? ctx.sections - 1 : 0, NULL, "cuts"))) goto done;
    if (!validate(&ctx, ov_length, mem_length, part_length)) {
        PyErr_SetString(PyExc_ValueError, "inconsistent sweep arrays");
        goto done;
    }
    {
        int indexed = index_members(&ctx, mem_length);
        if (indexed < 0) {
            PyErr_NoMemory();
            goto done;
        }
        if (indexed == 0) {
            PyErr_SetString(PyExc_ValueError, "inconsistent sweep arrays: section members and ranges disagree");
            goto done;
        }
    }
    ctx.capacity = capacity;
    ctx.alignment = alignment;

    size_t nb = (size_t)(n ? n : 1), ns = (size_t)(ctx.sections ? ctx.sections : 1);
    ctx.key_area = (int64_t *)malloc(nb * sizeof(int64_t));
    ctx.key_sections = (int64_t *)malloc(nb * sizeof(int64_t));
    ctx.key_overlaps = (int64_t *)malloc(nb * sizeof(int64_t));
    ctx.key_width = (int64_t *)malloc(nb * sizeof(int64_t));
    ctx.key_total = (int64_t *)calloc(nb, sizeof(int64_t));
    ctx.offset = (int64_t *)malloc(nb * sizeof(int64_t));
    ctx.solution = (int64_t *)malloc(nb * sizeof(int64_t));
    ctx.min_offset = (int64_t *)calloc(nb, sizeof(int64_t));
    ctx.floor = (int64_t *)calloc(ns, sizeof(int64_t));
    ctx.total = (int64_t *)calloc(ns, sizeof(int64_t));
    ctx.section_min = (int64_t *)malloc(ns * sizeof(int64_t));
    ctx.left_old = (int64_t *)malloc(ns * sizeof(int64_t));
    ctx.right_old = (int64_t *)malloc(ns * sizeof(int64_t));
    ctx.cover = (int32_t *)calloc(ns + 1, sizeof(int32_t));
    if (!ctx.key_area || !ctx.key_sections || !ctx.key_overlaps || !ctx.key_width || !ctx.key_total ||
        !ctx.offset || !ctx.solution || !ctx.min_offset || !ctx.floor || !ctx.total || !ctx.section_min ||
        !ctx.left_old || !ctx.right_old || !ctx.cover) {
        PyErr_NoMemory();
        goto done;
    }
    for (int32_t b = 0; b < ctx.n; b++) {
        ctx.key_width[b] = ctx.upper[b] - ctx.lower[b];
        ctx.key_area[b] = ctx.size[b] * ctx.key_width[b];
        ctx.key_sections[b] = ctx.sec_hi[b] - ctx.sec_lo[b];
        ctx.key_overlaps[b] = ctx.ov_start[b + 1] - ctx.ov_start[b];
        ctx.offset[b] = UNPLACED;
        ctx.solution[b] = UNPLACED;
    }
    for (int32_t s = 0; s < ctx.sections; s++) {
        ctx.section_min[s] = ctx.mem_start[s] < ctx.mem_start[s + 1] ? 0 : NO_MIN;
        ctx.left_old[s] = ctx.right_old[s] = NO_MIN;
        for (int32_t i = ctx.mem_start[s]; i < ctx.mem_start[s + 1]; i++) ctx.total[s] += ctx.size[ctx.mem[i]];
    }
    if (time_limit >= 0) {
        ctx.has_deadline = 1;
        clock_gettime(CLOCK_MONOTONIC, &ctx.deadline);
        double whole = (double)(time_t)time_limit;
        ctx.deadline.tv_sec += (time_t)time_limit;
        ctx.deadline.tv_nsec += (long)((time_limit - whole) * 1e9);
        if (ctx.deadline.tv_nsec >= 1000000000L) {
            ctx.deadline.tv_sec += 1;
            ctx.deadline.tv_nsec -= 1000000000L;
        }
    }

    Py_ssize_t winner = -1;
    int status = ctx.n == 0 ? FOUND : round_robin(&ctx, heuristics, node_limit, &winner);
    if (ctx.n == 0) winner = 0;
    if (status == FAILED) {
        if (!ctx.interrupted && !PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    PyObject *offsets;
    if (status == FOUND) {
        offsets = PyList_New(n);
        if (offsets == NULL) goto done;
        for (Py_ssize_t b = 0; b < n; b++) {
            PyObject *value = PyLong_FromLongLong(ctx.solution[b]);
            if (value == NULL) {
                Py_DECREF(offsets);
                goto done;
            }
            PyList_SET_ITEM(offsets, b, value);
        }
    } else {
        offsets = Py_None;
        Py_INCREF(offsets);
    }
    result = Py_BuildValue("(iNLLn)", status, offsets, (long long)ctx.nodes, (long long)ctx.backtracks, winner);
done:
    ctx_free(&ctx);
    return result;
}

static PyMethodDef native_methods[] = {
    {"search", native_search, METH_VARARGS, search_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "_native", "MiniMalloc search core (C); see deeploy_minimalloc.native_search.", -1,
    native_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&native_module); }
