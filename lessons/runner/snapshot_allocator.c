/* snapshot_allocator.c - PyTorch's caching-allocator layout for --snapshot (rules in
 * snapshot_allocator.h). */
#include "snapshot_allocator.h"

#include <stdlib.h>

#define SA_DOMAINS 2

static const uint64_t domain_base[SA_DOMAINS] = {(uint64_t)1 << 32, (uint64_t)1 << 44};
static uint64_t next_segment_addr[SA_DOMAINS];
static sa_segment *segments;
static size_t nsegments, cap_segments;

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static size_t round_request(size_t bytes)
{
    return bytes < SA_MIN_BLOCK ? SA_MIN_BLOCK : round_up(bytes, SA_MIN_BLOCK);
}

/* The segment a request reserves when no free block fits (get_allocation_size). */
static size_t segment_size(size_t rounded)
{
    if (rounded <= SA_SMALL_SIZE) return SA_SMALL_BUFFER;
    if (rounded < SA_MIN_LARGE_ALLOC) return SA_LARGE_BUFFER;
    return round_up(rounded, SA_ROUND_LARGE);
}

/* The smallest free block of the pool that fits, the lowest address among equals (the pool's set is ordered
 * by size, then address). */
static sa_block *best_fit(int domain, int small, size_t rounded)
{
    sa_block *best = NULL;
    for (size_t s = 0; s < nsegments; s++) {
        const sa_segment *g = &segments[s];
        if (g->released || g->domain != domain || g->small != small) continue;
        for (sa_block *b = g->first; b; b = b->next)
            if (!b->allocated && b->size >= rounded &&
                (!best || b->size < best->size || (b->size == best->size && b->addr < best->addr)))
                best = b;
    }
    return best;
}

static sa_block *new_block(uint64_t addr, size_t size, size_t segment)
{
    sa_block *b = calloc(1, sizeof *b);
    if (b) *b = (sa_block){.addr = addr, .size = size, .segment = segment};
    return b;
}

static sa_block *reserve_segment(int domain, int small, size_t size, size_t *index)
{
    if (nsegments == cap_segments) {
        size_t n = cap_segments ? 2 * cap_segments : 64;
        sa_segment *s = realloc(segments, n * sizeof *s);
        if (!s) return NULL;
        segments = s;
        cap_segments = n;
    }
    uint64_t addr = domain_base[domain] + next_segment_addr[domain];
    sa_block *b = new_block(addr, size, nsegments);
    if (!b) return NULL;
    next_segment_addr[domain] += round_up(size, SA_ROUND_LARGE);
    segments[nsegments] =
        (sa_segment){.addr = addr, .size = size, .domain = domain, .small = small, .first = b};
    *index = nsegments++;
    return b;
}

sa_block *sa_malloc(int domain, size_t bytes, size_t *new_segment)
{
    size_t rounded = round_request(bytes);
    int small = rounded <= SA_SMALL_SIZE;
    *new_segment = (size_t)-1;
    sa_block *b = best_fit(domain, small, rounded);
    if (!b) b = reserve_segment(domain, small, segment_size(rounded), new_segment);
    if (!b) return NULL;
    size_t rest = b->size - rounded;
    if (small ? rest >= SA_MIN_BLOCK : rest > SA_SMALL_SIZE) { /* should_split */
        sa_block *r = new_block(b->addr + rounded, rest, b->segment);
        if (!r) return NULL;
        r->prev = b;
        r->next = b->next;
        if (b->next) b->next->prev = r;
        b->next = r;
        b->size = rounded;
    }
    b->allocated = 1;
    b->requested = bytes;
    return b;
}

/* Folds b's free neighbour `n` (b->next) into b. */
static void absorb_next(sa_block *b)
{
    sa_block *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    free(n);
}

void sa_free(sa_block *b)
{
    b->allocated = 0;
    b->requested = 0;
    if (b->next && !b->next->allocated) absorb_next(b);
    if (b->prev && !b->prev->allocated) absorb_next(b->prev); /* frees b: the caller's pointer dies here */
}

void sa_empty_cache(int domain, void (*released)(void *ctx, size_t segment), void *ctx)
{
    for (size_t s = 0; s < nsegments; s++) {
        sa_segment *g = &segments[s];
        if (g->released || g->domain != domain || g->first->allocated || g->first->next) continue;
        g->released = 1;
        free(g->first);
        g->first = NULL;
        released(ctx, s);
    }
}

const sa_segment *sa_segments(size_t *n)
{
    *n = nsegments;
    return segments;
}

void sa_reset(void)
{
    for (size_t s = 0; s < nsegments; s++)
        for (sa_block *b = segments[s].first, *n; b; b = n) {
            n = b->next;
            free(b);
        }
    free(segments);
    segments = NULL;
    nsegments = cap_segments = 0;
    for (int d = 0; d < SA_DOMAINS; d++) next_segment_addr[d] = 0;
}
