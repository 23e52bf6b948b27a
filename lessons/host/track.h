/* track.h - the tracked allocators: every byte a lesson allocates is counted here.
 *
 * Memory is the subject of this project, so no implementation calls malloc or cudaMalloc directly. Each
 * allocation is registered with its size and a label ("W_expanded (saved for backward)"), in one of two
 * domains: host memory or device memory. The tracker keeps, per domain,
 *   live bytes      bytes allocated and not yet freed (what torch.cuda.memory_allocated() prints),
 *   peak bytes      the largest live value since the last track_scope_begin(),
 *   allocs / frees  how many calls,
 * and the same three numbers per label, so a lesson can print which tensor the memory went to.
 * Sizes are the exact bytes requested: no rounding, no allocator headers. That is what lets a lesson's
 * analytic formula equal the measurement to the byte.
 *
 * Poisoning: every new allocation is filled with 0xFF bytes (a NaN in f32, f64 and bf16; -1 in integers), so
 * an output element a kernel forgets to write shows up as NaN in the comparisons instead of a plausible zero.
 * Not thread-safe: the lessons allocate from one thread (CPU kernels may use threads, never to allocate). */
#ifndef KERNELS_TRACK_H
#define KERNELS_TRACK_H

#include <stddef.h>
#include <stdio.h>
#include "../../kernels/runtime/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MEM_HOST = 0, MEM_DEVICE = 1 } mem_domain;
#define MEM_DOMAINS 2

typedef struct {
    size_t live_bytes;
    size_t peak_bytes;
    size_t allocs;
    size_t frees;
} mem_counters;

/* --- host allocator ------------------------------------------------------------------------------------
 * host_alloc never returns NULL: when the system refuses, it prints the size and label and exits with status
 * 3 (the lessons check sizes against --mem-limit before they allocate, so this is a last line of defence).
 * Zero bytes is allowed and returns a unique, tracked, non-NULL pointer. Alignment is 256 bytes
 * (cudaMalloc's). */
void *host_alloc_at(size_t bytes, const char *label, const char *file, int line);
/* count * dtype_size(t) bytes, with the multiplication checked for overflow. */
void *host_alloc_array_at(size_t count, dtype t, const char *label, const char *file, int line);
/* The calls everyone writes: the macros add the calling source file and line, which --snapshot shows as the
 * allocation's frame (as PyTorch's snapshots show the Python line that made a tensor). */
#define host_alloc(bytes, label) host_alloc_at((bytes), (label), __FILE__, __LINE__)
#define host_alloc_array(count, t, label) host_alloc_array_at((count), (t), (label), __FILE__, __LINE__)
void host_free(void *p); /* NULL is a no-op; a pointer the tracker never gave out aborts with a message */

/* --- registry, used by the host allocator above and by the CUDA allocator (cuda_track.h) --------------- */
void track_register(mem_domain d, void *p, size_t bytes, const char *label);
/* Forgets p and returns its size; aborts with a message if p is unknown (a double free). */
size_t track_unregister(mem_domain d, void *p);
/* A buffer that changes role without being reallocated (lesson 2's backward writes dx over the saved alphas):
 * its bytes move from the old label to the new one, so the per-tensor table names what the memory holds. Live
 * and peak totals do not change. Aborts if p is not live. */
void track_relabel(mem_domain d, void *p, const char *label);
/* The size recorded for a live pointer, or 0 if it is not live. */
size_t track_size_of(mem_domain d, const void *p);

/* --- counters and scopes ------------------------------------------------------------------------------- */
mem_counters track_counters(mem_domain d);

/* A scope measures one implementation's run: begin resets the peak to the current live bytes in every domain
 * and remembers the baseline; track_scope_read() reports relative to it: live and peak above the baseline,
 * allocations since. Scopes do not nest (beginning one resets the peak for everybody). */
typedef struct {
    mem_counters base[MEM_DOMAINS];
} track_scope;
void track_scope_begin(track_scope *s);
mem_counters track_scope_read(const track_scope *s, mem_domain d);

/* Lazy host memory: host_alloc reserves address space (mmap MAP_NORESERVE) instead of allocating, and
 * host_free unmaps. For runs that fill nothing (the emulator's limits-only run): set it before the first
 * host_alloc, never unset. */
void track_set_lazy_host(int on);

/* Poisoning (on by default). Benchmarks that want pure kernel times may turn it off; tests never do. */
void track_set_poison(int on);
int track_poison(void);

/* Per-label table: label, live, peak (since the scope began), allocations in the scope. Labels with no
 * allocation in the current scope are not printed. */
void track_print_labels(FILE *f, mem_domain d);
/* Per-label peak bytes since the scope began, or 0 for an unknown label (tests use it). */
size_t track_label_peak(mem_domain d, const char *label);

/* Time spent inside the allocators (host_alloc/host_free/dev_alloc/dev_free, the poison fill included), in
 * milliseconds since the program started. The lesson session subtracts it from its forward and backward
 * times: a timing measures the algorithm, not the allocator or the poison fill. dev_alloc synchronises the
 * device before it starts its clock, so queued kernels are not counted as allocation time. */
double track_alloc_ms(void);
void track_add_alloc_ms(double ms); /* for the device allocator */

/* An observer sees every allocation, free and relabel as it happens (the --timeline CSV): kind is 'a', 'f' or
 * 'r'; from is the label a relabelled buffer had before ('r'; NULL otherwise), so a timeline can move its
 * bytes from one label to the other; live is the domain's live bytes after the event. NULL turns it off. */
typedef void (*track_observer)(void *ctx, char kind, mem_domain d, const char *label, const char *from,
                               size_t bytes, size_t live);
void track_set_observer(track_observer fn, void *ctx);
/* The address of the buffer an observer call is about (valid during the call): --snapshot pairs each free
 * with its allocation by it. */
const void *track_event_ptr(void);
/* The source file and line of the host_alloc / dev_alloc call an 'a' observer call is about (valid during the
 * call); NULL and 0 for a pointer registered directly with track_register. */
const char *track_event_site(int *line);
/* The allocators set the site of the allocation they are about to register (track_register clears it). */
void track_set_site(const char *file, int line);
/* The observer now (and its ctx): a second observer calls it on, so --timeline and --snapshot both see. */
track_observer track_get_observer(void **ctx);

/* Prints every allocation still live (label and size) and returns how many. Drivers call it before exit:
 * a lesson that leaks says so. */
size_t track_report_live(FILE *f);

#ifdef __cplusplus
}
#endif

#endif
