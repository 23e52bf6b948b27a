/* snapshot_allocator.h - where PyTorch's CUDA caching allocator would put each of the tracker's allocations,
 * so that --snapshot (snapshot.h) shows the segments and block reuse a learner sees in a real PyTorch
 * snapshot.
 *
 * The rules are those of c10/cuda/CUDACachingAllocator.cpp with its default settings (no max_split_size, no
 * expandable segments, one stream):
 *   - a request is rounded up to a multiple of 512 bytes (512 at least);
 *   - a rounded size of at most 1 MiB comes from the small pool, whose segments are 2 MiB; a larger one from
 *     the
 *     large pool, whose segments are 20 MiB for a request under 10 MiB and the request rounded up to 2 MiB
 *     above;
 *   - a request takes the best-fitting free block of its pool (the smallest that fits, the lowest address
 *     among
 *     equals) and reserves a new segment only when none fits;
 *   - the block is split when what remains is at least 512 bytes (small pool) or more than 1 MiB (large
 *     pool);
 *   - a freed block merges with free neighbours of its segment; segments stay reserved until empty_cache.
 * Addresses are the viewer's, not the process's: each domain's segments are laid one after the other from a
 * base of their own, 2 MiB aligned, never reusing a released segment's range.
 *
 * The bookkeeping lives in plain malloc'd memory: it models PyTorch's allocator, it is not the lesson's
 * memory. */
#ifndef LESSONS_SNAPSHOT_ALLOCATOR_H
#define LESSONS_SNAPSHOT_ALLOCATOR_H

#include <stddef.h>
#include <stdint.h>

#define SA_MIN_BLOCK ((size_t)512)
#define SA_SMALL_SIZE ((size_t)1 << 20)          /* largest small-pool request */
#define SA_SMALL_BUFFER ((size_t)2 << 20)        /* small-pool segment */
/* large-pool segment for requests under SA_MIN_LARGE_ALLOC */
#define SA_LARGE_BUFFER ((size_t)20 << 20)
#define SA_MIN_LARGE_ALLOC ((size_t)10 << 20)
#define SA_ROUND_LARGE ((size_t)2 << 20)

typedef struct sa_block sa_block;
struct sa_block {
    uint64_t addr;
    /* the block's bytes (rounded; more than requested when a split would leave too little) */
    size_t size;
    size_t requested;        /* the tracker's bytes while allocated */
    int allocated;
    size_t segment;          /* index into sa_segments() */
    size_t event;            /* the caller's tag for an allocated block (snapshot.c: its alloc event) */
    sa_block *prev, *next;   /* neighbours in the segment, by address */
};

typedef struct {
    uint64_t addr;
    size_t size;
    int domain;
    int small;               /* small pool (2 MiB segments) or large */
    int released;            /* given back by sa_empty_cache */
    sa_block *first;         /* its blocks, by address */
} sa_segment;

/* The block for `bytes` in `domain`; *new_segment is the index of the segment it reserved, or (size_t)-1.
 * NULL when out of memory (the model's own bookkeeping). */
sa_block *sa_malloc(int domain, size_t bytes, size_t *new_segment);
void sa_free(sa_block *b);
/* Releases each segment of `domain` with nothing allocated in it (torch.cuda.empty_cache()), calling
 * released(ctx, segment index) for each. */
void sa_empty_cache(int domain, void (*released)(void *ctx, size_t segment), void *ctx);
const sa_segment *sa_segments(size_t *n);
void sa_reset(void);

#endif
